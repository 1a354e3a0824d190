// The guest-console-log container's job (KubeVirt's virt-tail): print the guest's serial log,
// from its start, to stdout, so that `kubectl logs <pod> -c guest-console-log [-f]` shows the
// boot and follows it. It only reads the file qemu writes, so a reader that never comes, or
// a stdout nobody drains, cannot slow the guest; rotation is FileTail's.

import { FileTail } from '../logs/file-tail.js';

export interface ConsoleLogTailOptions {
  readonly logFile: string;
  readonly write: (text: string) => void;
  readonly intervalMs?: number;
}

/** Runs until `stop` aborts, then prints what is left and resolves. */
export async function runConsoleLogTail(o: ConsoleLogTailOptions, stop: AbortSignal): Promise<void> {
  // Serial lines end in CR LF; a log line ends at the LF.
  const tail = new FileTail({ path: o.logFile, onLine: (line) => o.write(`${line.replace(/\r+$/, '')}\n`), intervalMs: o.intervalMs ?? 200 });
  // FileTail's timer is unref'd: this keeps the process alive until stopped.
  const keepAlive = setInterval(() => undefined, 1 << 30);
  try {
    await tail.poll();
    await new Promise<void>((resolve) => {
      if (stop.aborted) resolve();
      else stop.addEventListener('abort', () => resolve(), { once: true });
    });
  } finally {
    clearInterval(keepAlive);
    await tail.close();
  }
}
