// The one way a podvirt test waits for something it cannot await: poll a condition until it
// holds, and fail with what was awaited once the deadline passes. Every polling loop in the
// tests goes through here, so none can spin forever.

export interface EventuallyOptions {
  /** How long to keep trying, from the first check. */
  readonly deadlineMs?: number;
  /** Pause between checks. */
  readonly stepMs?: number;
  /** Named in the failure. */
  readonly what?: string;
}

export const DEFAULT_EVENTUALLY_DEADLINE_MS = 5_000;

/**
 * Resolves once `check` returns a value other than false or undefined (or a promise of one),
 * with that value, so a wait can hand back what it found; rejects at the deadline.
 */
export async function eventually<T>(check: () => T | false | undefined | Promise<T | false | undefined>, options: EventuallyOptions = {}): Promise<T> {
  const deadlineMs = options.deadlineMs ?? DEFAULT_EVENTUALLY_DEADLINE_MS;
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const value = await check();
    if (value !== false && value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${options.what ?? 'condition'} not met within ${deadlineMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, options.stepMs ?? 10));
  }
}
