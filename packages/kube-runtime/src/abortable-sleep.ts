// The one interruptible sleep of the controller and the handler (and the informer's back-off):
// resolves after `ms`, or at once when `signal` aborts; never rejects, so a loop that backs off
// checks `signal.aborted` afterwards instead of catching AbortError, and leaves no timer or
// listener behind.
//
// Built on the global setTimeout rather than node:timers/promises: node:test's mock.timers fakes
// the former, and on Node 20 not the latter, so tests that move a fake clock through a back-off
// (the leader elector's) would wait on a real timer forever.

export function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}
