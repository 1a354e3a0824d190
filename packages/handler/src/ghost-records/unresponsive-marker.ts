// KubeVirt's `launcher-unresponsive` marker: once the handler decides a launcher is gone (its
// socket silent past the watchdog timeout), it drops this file next to the socket, so the
// decision survives a handler restart instead of granting the launcher a fresh allowance.

import { readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

export const UNRESPONSIVE_MARKER = 'launcher-unresponsive';

export function unresponsiveMarkerPath(socketFile: string): string {
  return join(dirname(socketFile), UNRESPONSIVE_MARKER);
}

/**
 * Touches the marker, with why the launcher was declared gone as its content (KubeVirt's marker
 * is empty; an empty one still counts); a directory that is already gone (pod removed) needs none.
 */
export async function markLauncherUnresponsive(socketFile: string, why = ''): Promise<void> {
  try {
    await writeFile(unresponsiveMarkerPath(socketFile), why, { mode: 0o600 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}

/** undefined when not marked; otherwise the recorded reason ('' when none was recorded). */
export async function launcherUnresponsiveMark(socketFile: string): Promise<string | undefined> {
  try {
    return (await readFile(unresponsiveMarkerPath(socketFile), 'utf8')).trim();
  } catch {
    return undefined;
  }
}
