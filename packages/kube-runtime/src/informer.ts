// A list-watch cache of one kind of object, as client-go's reflector and store: list, then watch
// from the list's resourceVersion; relist when the server says the version expired (410); watch
// again when the server ends a watch; back off exponentially on errors; re-deliver every cached
// object each resync period, so that a missed event or a failed write is repaired. The
// controller and the handler both keep their caches in it.

import { isKubeApiError } from './kube-api-error.js';
import type { KubeWatchEvent } from './kube-client.js';
import { abortableSleep } from './abortable-sleep.js';
import { objectKey, type KubeObject } from './object-key.js';

export interface ObjectList<T> {
  readonly items: T[];
  readonly resourceVersion: string;
}

/** Where the objects come from: the API server (`kubeListWatch`) or a test's fake. */
export interface ListWatchSource<T> {
  list(signal: AbortSignal): Promise<ObjectList<T>>;
  /**
   * Streams the changes after `resourceVersion` into `onEvent` until the server ends the watch
   * (resolves) or `signal` aborts (resolves). A version the server no longer has rejects
   * (KubeApiError KUBE_ERR_EXPIRED or KUBE_ERR_GONE by default; see `isExpired`).
   */
  watch(resourceVersion: string, onEvent: (event: KubeWatchEvent<T>) => void, signal: AbortSignal): Promise<void>;
}

export type InformerEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'RESYNC';

/** pino's shape, reduced to what the informer says. */
export interface InformerLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export interface InformerOptions<T> {
  readonly source: ListWatchSource<T>;
  /** Called for every change; for DELETED with the last known object. */
  readonly onEvent: (type: InformerEventType, obj: T) => void;
  readonly log: InformerLog;
  /** Every cached object is re-delivered (RESYNC) this often; client-go controllers use minutes. */
  readonly resyncPeriodMs: number;
  /** The cache key; default `namespace/name`. */
  readonly key?: (obj: T) => string;
  /** True when a failed watch means "relist"; default: a KubeApiError with code Expired or Gone. */
  readonly isExpired?: (err: unknown) => boolean;
  /** First retry delay after a failed list or watch; doubles up to `maxRetryMs`. */
  readonly retryMs?: number;
  readonly maxRetryMs?: number;
  readonly now?: () => number;
}

// A watch the server closes this soon after opening it counts as a failure, so a server that
// keeps hanging up is not re-dialled in a tight loop.
const MIN_HEALTHY_WATCH_MS = 1_000;
const DEFAULT_RETRY_MS = 500;
const DEFAULT_MAX_RETRY_MS = 30_000;

const expiredByDefault = (err: unknown): boolean => isKubeApiError(err, 'KUBE_ERR_EXPIRED') || isKubeApiError(err, 'KUBE_ERR_GONE');

export class Informer<T extends KubeObject> {
  readonly #o: InformerOptions<T>;
  readonly #store = new Map<string, T>();
  readonly #abort = new AbortController();
  readonly #key: (obj: T) => string;
  #running: Promise<void> | undefined;
  #resync: NodeJS.Timeout | undefined;
  #synced = false;
  readonly #syncWaiters: Array<() => void> = [];

  constructor(options: InformerOptions<T>) {
    this.#o = options;
    this.#key = options.key ?? objectKey;
  }

  get(key: string): T | undefined {
    return this.#store.get(key);
  }

  list(): T[] {
    return [...this.#store.values()];
  }

  /** True once the first list has filled the cache. */
  get synced(): boolean {
    return this.#synced;
  }

  start(): void {
    if (this.#running !== undefined || this.#abort.signal.aborted) return;
    this.#running = this.#run(this.#abort.signal);
    this.#resync = setInterval(() => {
      for (const obj of this.#store.values()) this.#o.onEvent('RESYNC', obj);
    }, this.#o.resyncPeriodMs);
    this.#resync.unref();
  }

  /** Resolves true after the first successful list, false when `signal` aborts first. */
  waitForSync(signal: AbortSignal): Promise<boolean> {
    if (this.#synced) return Promise.resolve(true);
    if (signal.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const onAbort = (): void => {
        const i = this.#syncWaiters.indexOf(onSynced);
        if (i >= 0) this.#syncWaiters.splice(i, 1);
        resolve(false);
      };
      const onSynced = (): void => {
        signal.removeEventListener('abort', onAbort);
        resolve(true);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.#syncWaiters.push(onSynced);
    });
  }

  /** Stops watching and the resync timer; idempotent. */
  async close(): Promise<void> {
    this.#abort.abort();
    clearInterval(this.#resync);
    await this.#running;
  }

  async #run(signal: AbortSignal): Promise<void> {
    const now = this.#o.now ?? Date.now;
    const isExpired = this.#o.isExpired ?? expiredByDefault;
    let failures = 0;
    while (!signal.aborted) {
      try {
        let resourceVersion = await this.#relist(signal);
        failures = 0;
        while (!signal.aborted) {
          const opened = now();
          resourceVersion = await this.#watch(resourceVersion, signal);
          if (now() - opened < MIN_HEALTHY_WATCH_MS) await this.#backoff(++failures, signal);
          else failures = 0;
        }
      } catch (err) {
        if (signal.aborted) return;
        if (isExpired(err)) {
          this.#o.log.info({}, 'watch expired, relisting');
          continue;
        }
        this.#o.log.warn({ err }, 'list or watch failed, retrying');
        await this.#backoff(++failures, signal);
      }
    }
  }

  async #backoff(failures: number, signal: AbortSignal): Promise<void> {
    const base = this.#o.retryMs ?? DEFAULT_RETRY_MS;
    const ms = Math.min(base * 2 ** (failures - 1), this.#o.maxRetryMs ?? DEFAULT_MAX_RETRY_MS);
    await abortableSleep(ms, signal);
  }

  async #relist(signal: AbortSignal): Promise<string> {
    const { items, resourceVersion } = await this.#o.source.list(signal);
    const seen = new Set<string>();
    for (const obj of items) {
      seen.add(this.#key(obj));
      this.#apply({ type: 'MODIFIED', object: obj });
    }
    for (const [key, old] of this.#store) {
      if (seen.has(key)) continue;
      this.#store.delete(key);
      this.#o.onEvent('DELETED', old);
    }
    if (!this.#synced) {
      this.#synced = true;
      for (const resolve of this.#syncWaiters.splice(0)) resolve();
    }
    return resourceVersion;
  }

  async #watch(from: string, signal: AbortSignal): Promise<string> {
    let resourceVersion = from;
    await this.#o.source.watch(from, (event) => {
      // A bookmark carries only the version to resume from.
      resourceVersion = event.object.metadata?.resourceVersion ?? resourceVersion;
      this.#apply(event);
    }, signal);
    return resourceVersion;
  }

  #apply(event: KubeWatchEvent<T>): void {
    if (event.type === 'BOOKMARK') return;
    const key = this.#key(event.object);
    if (event.type === 'DELETED') {
      this.#store.delete(key);
      this.#o.onEvent('DELETED', event.object);
      return;
    }
    const old = this.#store.get(key);
    // A relist re-delivers unchanged objects; only real changes are reported.
    if (old !== undefined && old.metadata?.resourceVersion === event.object.metadata?.resourceVersion) return;
    this.#store.set(key, event.object);
    this.#o.onEvent(old === undefined ? 'ADDED' : 'MODIFIED', event.object);
  }
}
