// Remembers pod creations not yet seen by the pod informer. Without it a second sync, running
// on a cache that lags the API server, would see no pod and create another (KubeVirt's
// controllers guard the same way). An expectation lapses after a TTL, so a lost watch event
// delays a VMI instead of wedging it.

export const DEFAULT_EXPECTATION_TTL_MS = 5 * 60_000;

interface Pending {
  count: number;
  since: number;
}

export class PodExpectations {
  readonly #pending = new Map<string, Pending>();
  readonly #ttlMs: number;
  readonly #now: () => number;

  constructor(options: { ttlMs?: number; now?: () => number } = {}) {
    this.#ttlMs = options.ttlMs ?? DEFAULT_EXPECTATION_TTL_MS;
    this.#now = options.now ?? Date.now;
  }

  expectCreation(key: string): void {
    const pending = this.#pending.get(key);
    this.#pending.set(key, { count: (pending?.count ?? 0) + 1, since: this.#now() });
  }

  /** A pod of `key` appeared in the cache, or a creation failed and will not appear. */
  creationObserved(key: string): void {
    const pending = this.#pending.get(key);
    if (!pending) return;
    if (pending.count <= 1) this.#pending.delete(key);
    else pending.count -= 1;
  }

  /** Milliseconds until the expectation of `key` lapses; 0 when nothing is awaited. */
  pendingFor(key: string): number {
    const pending = this.#pending.get(key);
    if (!pending) return 0;
    const left = pending.since + this.#ttlMs - this.#now();
    if (left <= 0) {
      this.#pending.delete(key);
      return 0;
    }
    return left;
  }

  forget(key: string): void {
    this.#pending.delete(key);
  }
}
