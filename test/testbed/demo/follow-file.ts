import { open } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';

export interface FileFollower {
  close(): Promise<void>;
}

/**
 * Calls onLine for every complete line appended to a file, polling (the serial log is written
 * by qemu in another mount namespace, where inotify still works but the file may not exist
 * yet when we start). The timer is unref'd; close() flushes what is left.
 */
export function followFile(path: string, onLine: (line: string) => void, intervalMs = 100): FileFollower {
  let handle: FileHandle | undefined;
  let position = 0;
  let pending = '';
  let busy: Promise<void> = Promise.resolve();

  const poll = async (): Promise<void> => {
    handle ??= await open(path, 'r').catch(() => undefined);
    if (!handle) return;
    const buf = Buffer.alloc(64 * 1024);
    for (;;) {
      const { bytesRead } = await handle.read(buf, 0, buf.length, position);
      if (bytesRead === 0) break;
      position += bytesRead;
      pending += buf.subarray(0, bytesRead).toString('utf8');
    }
    const lines = pending.split(/\r?\n/);
    pending = lines.pop() ?? '';
    for (const line of lines) if (line.trim() !== '') onLine(line);
  };
  const timer = setInterval(() => { busy = busy.then(poll); }, intervalMs);
  timer.unref();

  return {
    async close() {
      clearInterval(timer);
      await busy;
      await poll();
      if (pending.trim() !== '') onLine(pending);
      await handle?.close();
    },
  };
}
