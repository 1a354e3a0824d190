// KubeVirt's `launcher-unresponsive` marker: once the handler decides a launcher is gone (its
// socket silent past the watchdog timeout), it drops this file next to the socket, so the
// decision survives a handler restart instead of granting the launcher a fresh allowance.

import { access, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

export const UNRESPONSIVE_MARKER = 'launcher-unresponsive';

export function unresponsiveMarkerPath(socketFile: string): string {
  return join(dirname(socketFile), UNRESPONSIVE_MARKER);
}

/** Touches the marker; a directory that is already gone (pod removed) needs none. */
export async function markLauncherUnresponsive(socketFile: string): Promise<void> {
  try {
    await writeFile(unresponsiveMarkerPath(socketFile), '', { flag: 'a', mode: 0o600 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}

export async function isLauncherMarkedUnresponsive(socketFile: string): Promise<boolean> {
  try {
    await access(unresponsiveMarkerPath(socketFile));
    return true;
  } catch {
    return false;
  }
}
