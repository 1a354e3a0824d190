// What a test or benchmark starts on this machine (a testbed, a podvirt stack) is closed when
// its process is told to stop (SIGINT, SIGTERM, SIGHUP), newest first, before the signal takes
// its course: an interrupted run leaves no qemu, network namespace, mount or temp directory
// behind. A second signal while closing ends the process at once. A process that handles the
// signal itself (the demo, the `testbed up` service) closes what it started in its own way:
// then this stands aside.

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
const closers: (() => Promise<unknown>)[] = [];

function onSignal(signal: NodeJS.Signals): void {
  // First in line (prepended), so every other listener, a `once` one too, is still there.
  if (process.listenerCount(signal) > 1) return;
  for (const s of SIGNALS) process.removeListener(s, onSignal);
  const all = closers.splice(0).reverse();
  void (async () => {
    for (const close of all) await close().catch(() => undefined);
    // With this listener gone, the signal's own action follows.
    process.kill(process.pid, signal);
  })();
}

/** Runs `close` if a stop signal comes first; the returned function forgets it (call it from close). */
export function closeOnSignal(close: () => Promise<unknown>): () => void {
  closers.push(close);
  if (closers.length === 1) for (const s of SIGNALS) process.prependListener(s, onSignal);
  return () => {
    const i = closers.indexOf(close);
    if (i < 0) return;
    closers.splice(i, 1);
    if (closers.length === 0) for (const s of SIGNALS) process.removeListener(s, onSignal);
  };
}
