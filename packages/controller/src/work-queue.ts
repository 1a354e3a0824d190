// A keyed, rate-limited work queue with client-go's semantics, free of any Kubernetes type so
// the handler can use the same one:
// - a key waits in the queue at most once, however often it is added;
// - a key being processed is never handed to a second worker; added meanwhile, it is queued
//   again when the first worker calls done();
// - addRateLimited() delays a key by an exponential per-key backoff until forget() resets it.

export interface WorkQueueOptions {
  /** First retry delay; client-go's default controller rate limiter starts at 5 ms. */
  readonly baseDelayMs?: number;
  /** Ceiling of the backoff; client-go caps at 1000 s, which hides a broken key for too long
   * in a controller this small, so podvirt's default is 5 min. */
  readonly maxDelayMs?: number;
}

export const DEFAULT_BASE_DELAY_MS = 5;
export const DEFAULT_MAX_DELAY_MS = 5 * 60_000;

type Waiter<K> = (key: K | undefined) => void;

export class WorkQueue<K> {
  readonly #baseDelayMs: number;
  readonly #maxDelayMs: number;
  readonly #queue: K[] = [];
  readonly #dirty = new Set<K>();
  readonly #processing = new Set<K>();
  readonly #failures = new Map<K, number>();
  readonly #delayed = new Map<K, { at: number; timer: NodeJS.Timeout }>();
  readonly #waiters: Waiter<K>[] = [];
  #shutDown = false;

  constructor(options: WorkQueueOptions = {}) {
    this.#baseDelayMs = options.baseDelayMs ?? DEFAULT_BASE_DELAY_MS;
    this.#maxDelayMs = options.maxDelayMs ?? DEFAULT_MAX_DELAY_MS;
  }

  /** Keys waiting to be handed out (not those in flight or delayed). */
  get length(): number {
    return this.#queue.length;
  }

  get isShutDown(): boolean {
    return this.#shutDown;
  }

  add(key: K): void {
    if (this.#shutDown || this.#dirty.has(key)) return;
    this.#dirty.add(key);
    if (this.#processing.has(key)) return;
    const waiter = this.#waiters.shift();
    if (waiter) {
      this.#dirty.delete(key);
      this.#processing.add(key);
      waiter(key);
    } else {
      this.#queue.push(key);
    }
  }

  /** Adds `key` after `delayMs`; of several pending delays for one key the earliest wins. */
  addAfter(key: K, delayMs: number): void {
    if (this.#shutDown) return;
    if (delayMs <= 0) {
      this.add(key);
      return;
    }
    const at = Date.now() + delayMs;
    const pending = this.#delayed.get(key);
    if (pending && pending.at <= at) return;
    if (pending) clearTimeout(pending.timer);
    const timer = setTimeout(() => {
      this.#delayed.delete(key);
      this.add(key);
    }, delayMs);
    // A pending retry must not keep a closing process alive.
    timer.unref();
    this.#delayed.set(key, { at, timer });
  }

  /** Re-adds `key` after its next backoff step: base × 2^failures, capped. */
  addRateLimited(key: K): void {
    const failures = this.#failures.get(key) ?? 0;
    this.#failures.set(key, failures + 1);
    this.addAfter(key, this.backoffFor(failures));
  }

  /** Delay of the `failures`-th retry (0-based). */
  backoffFor(failures: number): number {
    // 2^40 × 5 ms already exceeds any sane cap; the bound keeps the float finite.
    const delay = this.#baseDelayMs * 2 ** Math.min(failures, 40);
    return Math.min(delay, this.#maxDelayMs);
  }

  /** Ends the backoff of `key` (its work succeeded). */
  forget(key: K): void {
    this.#failures.delete(key);
  }

  retries(key: K): number {
    return this.#failures.get(key) ?? 0;
  }

  /**
   * Resolves with the next key, marking it in flight until done(key); resolves undefined once
   * the queue is shut down or `signal` aborts.
   */
  get(signal?: AbortSignal): Promise<K | undefined> {
    if (this.#shutDown || signal?.aborted) return Promise.resolve(undefined);
    const key = this.#queue.shift();
    if (key !== undefined) {
      this.#dirty.delete(key);
      this.#processing.add(key);
      return Promise.resolve(key);
    }
    return new Promise((resolve) => {
      const onAbort = (): void => {
        const index = this.#waiters.indexOf(waiter);
        if (index >= 0) this.#waiters.splice(index, 1);
        resolve(undefined);
      };
      const waiter: Waiter<K> = (next) => {
        signal?.removeEventListener('abort', onAbort);
        resolve(next);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#waiters.push(waiter);
    });
  }

  /** Ends the processing of `key`; if it was added meanwhile it is queued again. */
  done(key: K): void {
    this.#processing.delete(key);
    if (this.#dirty.has(key)) {
      this.#dirty.delete(key);
      this.add(key);
    }
  }

  /** Stops handing out keys, drops pending delays and wakes every waiting get(). Idempotent. */
  shutDown(): void {
    if (this.#shutDown) return;
    this.#shutDown = true;
    for (const { timer } of this.#delayed.values()) clearTimeout(timer);
    this.#delayed.clear();
    this.#queue.length = 0;
    this.#dirty.clear();
    for (const waiter of this.#waiters.splice(0)) waiter(undefined);
  }
}
