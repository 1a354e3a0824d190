import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

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
 * Resolves once a unix socket accepts a connection; false when `deadline` (epoch ms) passes
 * or `stop()` turns true first. The socket file appears before the daemon listens on it.
 */
export async function waitForSocket(path: string, deadline: number, stop: () => boolean): Promise<boolean> {
  for (;;) {
    if (await acceptsConnections(path)) return true;
    if (stop() || Date.now() >= deadline) return false;
    await sleep(25);
  }
}
