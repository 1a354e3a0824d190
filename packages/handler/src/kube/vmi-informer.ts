// A list-watch cache of the VMIs on this node. It relists when the watch's resourceVersion has
// expired (410), rewatches when the server ends a watch, backs off on errors, and re-delivers
// every cached VMI each resync period so that a missed event is never fatal.

import type { VirtualMachineInstance } from '@podvirt/api';
import type { Logger } from 'pino';
import { abortableSleep } from '../abortable-sleep.js';
import { isHandlerError } from '../handler-error.js';
import { vmiKey } from '../vmi-key.js';
import type { VmiApi, VmiWatchEvent } from './vmi-api.js';

export type InformerEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'RESYNC';

export interface VmiInformerOptions {
  readonly api: VmiApi;
  readonly labelSelector: string;
  readonly resyncPeriodMs: number;
  readonly log: Logger;
  /** Called for every change; for DELETED with the last known object. */
  readonly onEvent: (type: InformerEventType, vmi: VirtualMachineInstance) => void;
  /** First retry delay after a failed list or watch; doubles up to `maxRetryMs`. */
  readonly retryMs?: number;
  readonly maxRetryMs?: number;
}

// A watch the server closes this soon after opening it counts as a failure, so a server that
// keeps hanging up is not re-dialled in a tight loop.
const MIN_HEALTHY_WATCH_MS = 1_000;

export class VmiInformer {
  readonly #o: VmiInformerOptions;
  readonly #store = new Map<string, VirtualMachineInstance>();
  readonly #abort = new AbortController();
  #running: Promise<void> | undefined;
  #resync: NodeJS.Timeout | undefined;
  #synced = false;
  readonly #syncWaiters: Array<() => void> = [];

  constructor(options: VmiInformerOptions) {
    this.#o = options;
  }

  get(key: string): VirtualMachineInstance | undefined {
    return this.#store.get(key);
  }

  list(): VirtualMachineInstance[] {
    return [...this.#store.values()];
  }

  get synced(): boolean {
    return this.#synced;
  }

  start(): void {
    if (this.#running !== undefined || this.#abort.signal.aborted) return;
    this.#running = this.#run(this.#abort.signal);
    this.#resync = setInterval(() => {
      for (const vmi of this.#store.values()) this.#o.onEvent('RESYNC', vmi);
    }, this.#o.resyncPeriodMs);
    this.#resync.unref();
  }

  /** Resolves after the first successful list, or when `signal` aborts. */
  waitForSync(signal: AbortSignal): Promise<boolean> {
    if (this.#synced) return Promise.resolve(true);
    return new Promise((resolve) => {
      const onAbort = (): void => resolve(false);
      signal.addEventListener('abort', onAbort, { once: true });
      this.#syncWaiters.push(() => {
        signal.removeEventListener('abort', onAbort);
        resolve(true);
      });
    });
  }

  /** Stops watching; idempotent. */
  async close(): Promise<void> {
    this.#abort.abort();
    clearInterval(this.#resync);
    await this.#running;
  }

  async #run(signal: AbortSignal): Promise<void> {
    let failures = 0;
    while (!signal.aborted) {
      try {
        let resourceVersion = await this.#relist(signal);
        failures = 0;
        while (!signal.aborted) {
          const opened = Date.now();
          resourceVersion = await this.#watch(resourceVersion, signal);
          if (Date.now() - opened < MIN_HEALTHY_WATCH_MS) await this.#backoff(++failures, signal);
          else failures = 0;
        }
      } catch (err) {
        if (signal.aborted) return;
        if (isHandlerError(err, 'HANDLER_ERR_WATCH_EXPIRED')) {
          this.#o.log.info('watch expired, relisting');
          continue;
        }
        this.#o.log.warn({ err }, 'list or watch failed, retrying');
        await this.#backoff(++failures, signal);
      }
    }
  }

  #backoff(failures: number, signal: AbortSignal): Promise<void> {
    const base = this.#o.retryMs ?? 500;
    return abortableSleep(Math.min(base * 2 ** (failures - 1), this.#o.maxRetryMs ?? 30_000), signal);
  }

  async #relist(signal: AbortSignal): Promise<string> {
    const { items, resourceVersion } = await this.#o.api.list(this.#o.labelSelector, signal);
    const seen = new Set<string>();
    for (const vmi of items) {
      seen.add(vmiKey(vmi));
      this.#apply({ type: 'MODIFIED', object: vmi });
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
    await this.#o.api.watch(
      this.#o.labelSelector,
      from,
      (event) => {
        resourceVersion = event.object.metadata.resourceVersion ?? resourceVersion;
        this.#apply(event);
      },
      signal,
    );
    return resourceVersion;
  }

  #apply(event: VmiWatchEvent): void {
    if (event.type === 'BOOKMARK') return;
    const key = vmiKey(event.object);
    if (event.type === 'DELETED') {
      this.#store.delete(key);
      this.#o.onEvent('DELETED', event.object);
      return;
    }
    const old = this.#store.get(key);
    // A relist re-delivers unchanged objects; only real changes are reported.
    if (old?.metadata.resourceVersion === event.object.metadata.resourceVersion && old !== undefined) return;
    this.#store.set(key, event.object);
    this.#o.onEvent(old === undefined ? 'ADDED' : 'MODIFIED', event.object);
  }
}
