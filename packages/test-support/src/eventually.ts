// The one way a podvirt test waits for something it cannot await: poll a condition until it
// holds, and fail with what was awaited once the deadline passes. Every polling loop in the
// tests, the testbed and the benchmarks goes through here, so none can spin forever.

export interface EventuallyOptions {
  /** How long to keep trying, from the first check. */
  readonly deadlineMs?: number;
  /**
   * Pause between checks. Without it the pause starts at 10 ms and doubles up to 100 ms, so a
   * quick condition is seen at once and a slow one (a VM booting) does not spin the CPU. 0
   * yields to the event loop alone (`setImmediate`), for a benchmark that times what it waits for.
   */
  readonly stepMs?: number;
  /** Named in the failure. */
  readonly what?: string;
  /** More for the failure, read when the deadline passes: the last value seen, the logs of the processes under test. */
  readonly detail?: () => string;
  /** Ends the wait with the signal's reason, before the next check and during a pause. */
  readonly signal?: AbortSignal;
}

export const DEFAULT_EVENTUALLY_DEADLINE_MS = 5_000;
const FIRST_STEP_MS = 10;
const LONGEST_STEP_MS = 100;

/** The deadline passed with the condition unmet. A caller that has its own answer for that catches this code. */
export class EventuallyTimeoutError extends Error {
  readonly code = 'TEST_SUPPORT_ERR_TIMEOUT';
  override readonly name = 'EventuallyTimeoutError';
}

/**
 * Resolves once `check` returns a value other than false or undefined (or a promise of one),
 * with that value, so a wait can hand back what it found; rejects at the deadline with an
 * `EventuallyTimeoutError`. A check that throws ends the wait with its error.
 */
export async function eventually<T>(check: () => T | false | undefined | Promise<T | false | undefined>, options: EventuallyOptions = {}): Promise<T> {
  const deadlineMs = options.deadlineMs ?? DEFAULT_EVENTUALLY_DEADLINE_MS;
  const deadline = Date.now() + deadlineMs;
  const { signal } = options;
  let step = options.stepMs ?? FIRST_STEP_MS;
  for (;;) {
    signal?.throwIfAborted();
    const value = await check();
    if (value !== false && value !== undefined) return value;
    if (Date.now() > deadline) {
      const detail = options.detail?.() ?? '';
      throw new EventuallyTimeoutError(`${options.what ?? 'condition'} not met within ${deadlineMs} ms${detail === '' ? '' : `\n${detail}`}`);
    }
    await pause(step, signal);
    if (options.stepMs === undefined) step = Math.min(step * 2, LONGEST_STEP_MS);
  }
}

function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  if (ms === 0) return new Promise((resolve) => setImmediate(resolve));
  return new Promise((resolve, reject) => {
    if (signal === undefined) {
      setTimeout(resolve, ms);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal.reason as Error);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
