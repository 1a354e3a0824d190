// One plain connect to a launcher's unix socket. grpc-js folds every connect failure into
// UNAVAILABLE; the errno says whether anyone still listens. ECONNREFUSED on a socket file means
// the process that bound it is gone (a launcher never re-binds its socket), which is conclusive;
// a stopped or busy launcher still accepts connections (the kernel queues them), so a hung one
// is never mistaken for an exited one.

import { createConnection } from 'node:net';

export type SocketProbe = 'listening' | 'missing' | 'refused' | 'unknown';

// Accepting is the kernel's job even for a stopped process; this only bounds a pathological case.
const PROBE_TIMEOUT_MS = 1_000;

export function probeSocket(path: string): Promise<SocketProbe> {
  return new Promise((resolve) => {
    const socket = createConnection({ path });
    const finish = (result: SocketProbe): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(result);
    };
    const timer = setTimeout(() => finish('unknown'), PROBE_TIMEOUT_MS);
    timer.unref();
    socket.once('connect', () => finish('listening'));
    socket.once('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT' || err.code === 'ENOTDIR') finish('missing');
      else if (err.code === 'ECONNREFUSED' || err.code === 'ENOTSOCK') finish('refused');
      else finish('unknown');
    });
  });
}
