// The one way a podvirt test waits for something it cannot await: poll a condition until it
// holds, and fail with what was awaited once the deadline passes. Every polling loop in the
// tests goes through here, so none can spin forever.

export interface EventuallyOptions {
  /** How long to keep trying, from the first check. */
  readonly deadlineMs?: number;
  /**
   * Pause between checks. Without it the pause starts at 10 ms and doubles up to 100 ms, so a
   * quick condition is seen at once and a slow one (a VM booting) does not spin the CPU.
   */
  readonly stepMs?: number;
  /** Named in the failure. */
  readonly what?: string;
  /** More for the failure, read when the deadline passes: the last value seen, the logs of the processes under test. */
  readonly detail?: () => string;
}

export const DEFAULT_EVENTUALLY_DEADLINE_MS = 5_000;
const FIRST_STEP_MS = 10;
const LONGEST_STEP_MS = 100;

/**
 * Resolves once `check` returns a value other than false or undefined (or a promise of one),
 * with that value, so a wait can hand back what it found; rejects at the deadline. A check that
 * throws ends the wait with its error.
 */
export async function eventually<T>(check: () => T | false | undefined | Promise<T | false | undefined>, options: EventuallyOptions = {}): Promise<T> {
  const deadlineMs = options.deadlineMs ?? DEFAULT_EVENTUALLY_DEADLINE_MS;
  const deadline = Date.now() + deadlineMs;
  let step = options.stepMs ?? FIRST_STEP_MS;
  for (;;) {
    const value = await check();
    if (value !== false && value !== undefined) return value;
    if (Date.now() > deadline) {
      const detail = options.detail?.() ?? '';
      throw new Error(`${options.what ?? 'condition'} not met within ${deadlineMs} ms${detail === '' ? '' : `\n${detail}`}`);
    }
    await new Promise((resolve) => setTimeout(resolve, step));
    if (options.stepMs === undefined) step = Math.min(step * 2, LONGEST_STEP_MS);
  }
}
