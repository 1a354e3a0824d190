// Per-key exponential backoff, like client-go's ItemExponentialFailureRateLimiter: a key that
// keeps failing waits base·2^n, capped, and starts over once forgotten.

export interface ItemBackoffOptions {
  /** Delay after the first failure. */
  readonly baseDelayMs?: number;
  /** Upper bound, so a VMI that cannot sync is still retried now and again, never in a hot loop. */
  readonly maxDelayMs?: number;
}

// client-go's default starts at 5 ms; the cap is 5 minutes rather than client-go's 1000 s so
// that a fixed launcher or a repaired spec is picked up within the resync period.
const DEFAULT_BASE_MS = 5;
const DEFAULT_MAX_MS = 300_000;

export class ItemBackoff {
  readonly #base: number;
  readonly #max: number;
  readonly #failures = new Map<string, number>();

  constructor(options: ItemBackoffOptions = {}) {
    this.#base = options.baseDelayMs ?? DEFAULT_BASE_MS;
    this.#max = options.maxDelayMs ?? DEFAULT_MAX_MS;
  }

  /** Records one more failure of `key` and returns how long to wait before retrying it. */
  next(key: string): number {
    const n = this.#failures.get(key) ?? 0;
    this.#failures.set(key, n + 1);
    // 2^n overflows to Infinity long after the cap is reached; Math.min keeps it finite.
    return Math.min(this.#base * 2 ** n, this.#max);
  }

  failures(key: string): number {
    return this.#failures.get(key) ?? 0;
  }

  forget(key: string): void {
    this.#failures.delete(key);
  }
}
