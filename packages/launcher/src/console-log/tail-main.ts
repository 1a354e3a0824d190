// podvirt-tail: the guest-console-log container's entry point. Only this file touches process.*.
import { writeSync } from 'node:fs';
import { runConsoleLogTail } from './console-log-tail.js';
import { parseTailFlags } from './tail-flags.js';

const stop = new AbortController();
for (const sig of ['SIGTERM', 'SIGINT'] as const) process.on(sig, () => stop.abort());

try {
  const { logFile } = parseTailFlags(process.argv.slice(2));
  // Synchronous writes: the container is SIGKILLed at the end of its grace period.
  await runConsoleLogTail({ logFile, write: (text) => writeSync(1, text) }, stop.signal);
  process.exitCode = 0;
} catch (err) {
  process.stderr.write(`podvirt-tail: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
}
