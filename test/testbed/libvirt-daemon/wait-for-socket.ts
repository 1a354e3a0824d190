import { connect } from 'node:net';
import { eventually, EventuallyTimeoutError } from '@podvirt/test-support';

/** True when something listens on the unix socket `path` (a file alone is not enough). */
export function acceptsConnections(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(path);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * Resolves once a unix socket accepts a connection; false when `timeoutMs` passes or `stop()`
 * turns true first. The socket file appears before the daemon listens on it.
 */
export async function waitForSocket(path: string, timeoutMs: number, stop: () => boolean): Promise<boolean> {
  try {
    return await eventually(async () => (await acceptsConnections(path)) || (stop() ? 'stopped' : undefined), { what: `${path} accepting`, deadlineMs: timeoutMs, stepMs: 25 }) === true;
  } catch (err) {
    if (err instanceof EventuallyTimeoutError) return false;
    throw err;
  }
}
