// The loop both of the controller's reconcilers run: while leading, N workers over a keyed work
// queue, every key of the store first, then whatever changes. A key is never synced by two
// workers at once; a failed sync is retried with the queue's per-key backoff, a sync may ask to
// look again after a while. Outside a run (not leading) additions are dropped: the next run
// lists everything again.

import { WorkQueue, type ItemBackoffOptions } from '@podvirt/kube-runtime';
import type { Logger } from 'pino';

export interface KeyedSyncResult {
  readonly requeueAfterMs?: number;
}

/** Sees the queue at work (metrics): adds, and each sync's duration and outcome. */
export interface QueueObserver {
  added(): void;
  synced(seconds: number, ok: boolean): void;
}

export interface KeyedWorkersOptions {
  readonly workers: number;
  readonly queue?: ItemBackoffOptions;
  /** Every key of the store, queued when a run starts. */
  readonly keys: () => Iterable<string>;
  readonly sync: (key: string, log: Logger, signal: AbortSignal) => Promise<KeyedSyncResult>;
  /** The logger of one key's sync. */
  readonly log: (key: string) => Logger;
  /** What the warning of a failed sync says. */
  readonly failure: string;
  readonly observer?: QueueObserver;
}

export class KeyedWorkers {
  readonly #o: KeyedWorkersOptions;
  #queue: WorkQueue | undefined;

  constructor(options: KeyedWorkersOptions) {
    this.#o = options;
  }

  /** Queues `key` while a run is on. */
  add(key: string): void {
    if (this.#queue === undefined) return;
    this.#queue.add(key);
    this.#o.observer?.added();
  }

  /** Keys waiting for a worker (0 outside a run). */
  get depth(): number {
    return this.#queue?.length ?? 0;
  }

  get running(): boolean {
    return this.#queue !== undefined;
  }

  /** Runs until `signal` aborts; resolves when the workers have finished their current keys. */
  async run(signal: AbortSignal): Promise<void> {
    if (signal.aborted) return;
    const queue = new WorkQueue(this.#o.queue);
    this.#queue = queue;
    const onAbort = (): void => queue.shutDown();
    signal.addEventListener('abort', onAbort, { once: true });
    for (const key of this.#o.keys()) queue.add(key);
    const workers = Array.from({ length: Math.max(1, this.#o.workers) }, () => this.#work(queue, signal));
    await Promise.all(workers);
    signal.removeEventListener('abort', onAbort);
    if (this.#queue === queue) this.#queue = undefined;
  }

  async #work(queue: WorkQueue, signal: AbortSignal): Promise<void> {
    for (;;) {
      const key = await queue.get(signal);
      if (key === undefined) return;
      const log = this.#o.log(key);
      const started = performance.now();
      const observe = (ok: boolean): void => this.#o.observer?.synced((performance.now() - started) / 1000, ok);
      try {
        const result = await this.#o.sync(key, log, signal);
        observe(true);
        queue.forget(key);
        if (result.requeueAfterMs !== undefined) queue.addAfter(key, result.requeueAfterMs);
      } catch (err) {
        if (signal.aborted) return;
        observe(false);
        log.warn({ err, retries: queue.numRequeues(key) }, this.#o.failure);
        queue.addRateLimited(key);
      } finally {
        queue.done(key);
      }
    }
  }
}
