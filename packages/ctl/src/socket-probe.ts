// One plain connect to the node API's unix socket before the gRPC call. grpc-js folds every
// connect failure into UNAVAILABLE with a text message; the errno from a direct connect says
// precisely whether the socket is missing, root-only or stale, which decides the advice.
import { createConnection } from 'node:net';
import { ConnectError } from './connect-error.js';

export function probeUnixSocket(path: string, timeoutMs: number, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const socket = createConnection({ path });
    const finish = (err: Error | undefined): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      socket.destroy();
      if (err === undefined) resolve();
      else reject(err);
    };
    const onAbort = (): void => finish(signal?.reason instanceof Error ? signal.reason : new Error('aborted'));
    const timer = setTimeout(
      () => finish(new ConnectError('timeout', path, `no connection to the node API socket ${path} within ${timeoutMs} ms`)),
      timeoutMs,
    );
    signal?.addEventListener('abort', onAbort, { once: true });
    socket.once('connect', () => finish(undefined));
    socket.once('error', (err: NodeJS.ErrnoException) => finish(classify(path, err)));
  });
}

function classify(path: string, err: NodeJS.ErrnoException): ConnectError {
  switch (err.code) {
    case 'ENOENT':
    case 'ENOTDIR':
      return new ConnectError('socket-missing', path, `the node API socket ${path} does not exist`, { cause: err });
    case 'EACCES':
    case 'EPERM':
      return new ConnectError('permission-denied', path, `permission denied on the node API socket ${path}`, { cause: err });
    case 'ECONNREFUSED':
    case 'ENOTSOCK':
      return new ConnectError('refused', path, `nothing is listening on ${path} (connection refused)`, { cause: err });
    default:
      return new ConnectError('unreachable', path, `cannot connect to the node API socket ${path}: ${err.message}`, { cause: err });
  }
}
