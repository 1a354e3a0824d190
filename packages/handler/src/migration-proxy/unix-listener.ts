// A unix socket listener at a path of any length, in a directory it makes. The host path of a
// socket in a pod's emptyDir passes the 108 bytes a socket address holds, so the socket is bound
// through a descriptor of its directory (/proc/self/fd/<n>/<name>), as guest-socket.ts dials.

import { constants } from 'node:fs';
import { lstat, mkdir, open, unlink } from 'node:fs/promises';
import type { Server } from 'node:net';
import { basename, dirname, join } from 'node:path';
import { HandlerError } from '../handler-error.js';

/** Listens on `path`; a socket file left there (a handler that died) is replaced, any other file is refused. */
export async function listenUnix(server: Server, path: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o755 });
  const stale = await lstat(path).catch(() => undefined);
  if (stale !== undefined) {
    if (!stale.isSocket()) throw new HandlerError('HANDLER_ERR_MIGRATION_PROXY', `cannot listen on ${path}: a file that is not a socket is there`);
    await unlink(path);
  }
  const dir = await open(dirname(path), constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    await new Promise<void>((resolve, reject) => {
      const onError = (err: Error): void => reject(new HandlerError('HANDLER_ERR_MIGRATION_PROXY', `cannot listen on ${path}: ${err.message}`, { cause: err }));
      server.once('error', onError);
      server.listen(join('/proc/self/fd', String(dir.fd), basename(path)), () => {
        server.off('error', onError);
        resolve();
      });
    });
  } finally {
    await dir.close();
  }
}

/** Removes a socket file this process made; one already gone is fine. */
export async function removeSocketFile(path: string): Promise<void> {
  await unlink(path).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'ENOENT') throw err;
  });
}
