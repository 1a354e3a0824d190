// A keyed work queue with client-go's guarantees: a key is queued at most once, never handed
// to two workers at once, and a key added while a worker holds it is handed out again after
// done(). Delayed and rate-limited adds sit in timers until due.

import { ItemBackoff, type ItemBackoffOptions } from './item-backoff.js';

type Waiter = (key: string | undefined) => void;

export class WorkQueue {
  readonly #queue: string[] = [];
  /** Keys that must be processed (queued, or re-added while processing). */
  readonly #dirty = new Set<string>();
  readonly #processing = new Set<string>();
  readonly #waiters: Waiter[] = [];
  readonly #delayed = new Map<string, { timer: NodeJS.Timeout; dueMs: number }>();
  readonly #idle: Array<() => void> = [];
  readonly #backoff: ItemBackoff;
  #shuttingDown = false;

  constructor(options: ItemBackoffOptions = {}) {
    this.#backoff = new ItemBackoff(options);
  }

  get length(): number {
    return this.#queue.length;
  }

  get shuttingDown(): boolean {
    return this.#shuttingDown;
  }

  add(key: string): void {
    if (this.#shuttingDown || this.#dirty.has(key)) return;
    this.#dirty.add(key);
    if (this.#processing.has(key)) return;
    this.#hand(key);
  }

  /** Adds `key` after `delayMs`; an earlier pending add of the same key wins. */
  addAfter(key: string, delayMs: number): void {
    if (this.#shuttingDown) return;
    if (delayMs <= 0) {
      this.add(key);
      return;
    }
    const dueMs = Date.now() + delayMs;
    const pending = this.#delayed.get(key);
    if (pending !== undefined) {
      if (pending.dueMs <= dueMs) return;
      clearTimeout(pending.timer);
    }
    const timer = setTimeout(() => {
      this.#delayed.delete(key);
      this.add(key);
    }, delayMs);
    timer.unref?.();
    this.#delayed.set(key, { timer, dueMs });
  }

  /** Re-adds a failed key after its per-key exponential backoff. */
  addRateLimited(key: string): number {
    const delay = this.#backoff.next(key);
    this.addAfter(key, delay);
    return delay;
  }

  /** The key succeeded: its next failure starts from the base delay again. */
  forget(key: string): void {
    this.#backoff.forget(key);
  }

  numRequeues(key: string): number {
    return this.#backoff.failures(key);
  }

  /** The next key, or undefined once the queue shuts down or `signal` aborts. */
  get(signal?: AbortSignal): Promise<string | undefined> {
    const key = this.#queue.shift();
    if (key !== undefined) return Promise.resolve(this.#take(key));
    if (this.#shuttingDown || signal?.aborted === true) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const waiter: Waiter = (k) => {
        signal?.removeEventListener('abort', onAbort);
        resolve(k);
      };
      const onAbort = (): void => {
        const i = this.#waiters.indexOf(waiter);
        if (i >= 0) this.#waiters.splice(i, 1);
        resolve(undefined);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#waiters.push(waiter);
    });
  }

  /** The worker finished `key`; a key re-added meanwhile is queued again now. */
  done(key: string): void {
    this.#processing.delete(key);
    if (this.#dirty.has(key) && !this.#shuttingDown) this.#hand(key);
    if (this.#processing.size === 0) for (const resolve of this.#idle.splice(0)) resolve();
  }

  /** Stops handing out keys: waiting workers get undefined, delayed adds are dropped. */
  shutDown(): void {
    if (this.#shuttingDown) return;
    this.#shuttingDown = true;
    for (const { timer } of this.#delayed.values()) clearTimeout(timer);
    this.#delayed.clear();
    this.#queue.length = 0;
    for (const waiter of this.#waiters.splice(0)) waiter(undefined);
  }

  /** Resolves once no key is being processed. */
  idle(): Promise<void> {
    if (this.#processing.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  #hand(key: string): void {
    const waiter = this.#waiters.shift();
    if (waiter === undefined) this.#queue.push(key);
    else waiter(this.#take(key));
  }

  #take(key: string): string {
    this.#dirty.delete(key);
    this.#processing.add(key);
    return key;
  }
}
