// Where a VMI's serial console and VNC sockets are on the host, and how to reach them. The
// launcher puts them in its pod's `private` emptyDir (`<private>/<vmi uid>/virt-serial0`,
// `virt-vnc`), the same layout KubeVirt's virt-handler reaches through the pod's mounts.
// The kubelet's pod paths easily pass the 108 bytes a unix socket address may hold, so the
// socket is dialled through a descriptor of its directory: /proc/self/fd/<n>/<name> is short.

import { close, open, constants } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { basename, dirname, join } from 'node:path';
import { HandlerError } from '../handler-error.js';

export type GuestStreamKind = 'console' | 'vnc';

const SOCKET_NAMES: Readonly<Record<GuestStreamKind, string>> = { console: 'virt-serial0', vnc: 'virt-vnc' };

/** `<pod>/volumes/kubernetes.io~empty-dir/sockets/launcher-sock` → the same pod's guest socket. */
export function guestSocketPath(launcherSocketPath: string, vmiUid: string, kind: GuestStreamKind): string {
  const emptyDirs = dirname(dirname(launcherSocketPath));
  return join(emptyDirs, 'private', vmiUid, SOCKET_NAMES[kind]);
}

/** Connects to a unix socket of any path length; rejects with UNAVAILABLE when nobody listens. */
export async function connectGuestSocket(path: string, signal: AbortSignal): Promise<Socket> {
  const dirFd = await new Promise<number>((resolve, reject) =>
    open(dirname(path), constants.O_RDONLY | constants.O_DIRECTORY, (err, fd) => (err === null ? resolve(fd) : reject(unavailable(path, err)))),
  );
  try {
    return await new Promise<Socket>((resolve, reject) => {
      if (signal.aborted) {
        reject(new HandlerError('HANDLER_ERR_ABORTED', 'the client went away before the socket was reached'));
        return;
      }
      const socket = connect(join('/proc/self/fd', String(dirFd), basename(path)));
      const onAbort = (): void => {
        socket.destroy();
        reject(new HandlerError('HANDLER_ERR_ABORTED', 'the client went away before the socket was reached'));
      };
      signal.addEventListener('abort', onAbort, { once: true });
      socket.once('connect', () => {
        signal.removeEventListener('abort', onAbort);
        socket.removeAllListeners('error');
        resolve(socket);
      });
      socket.once('error', (err) => {
        signal.removeEventListener('abort', onAbort);
        socket.destroy();
        reject(unavailable(path, err));
      });
    });
  } finally {
    close(dirFd, () => undefined);
  }
}

function unavailable(path: string, err: Error): HandlerError {
  return new HandlerError('HANDLER_ERR_LAUNCHER_UNAVAILABLE', `cannot reach the VMI's ${basename(path)} socket: ${err.message}`, { cause: err });
}
