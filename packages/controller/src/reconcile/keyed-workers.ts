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
}

export class KeyedWorkers {
  readonly #o: KeyedWorkersOptions;
  #queue: WorkQueue | undefined;

  constructor(options: KeyedWorkersOptions) {
    this.#o = options;
  }

  /** Queues `key` while a run is on. */
  add(key: string): void {
    this.#queue?.add(key);
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
      try {
        const result = await this.#o.sync(key, log, signal);
        queue.forget(key);
        if (result.requeueAfterMs !== undefined) queue.addAfter(key, result.requeueAfterMs);
      } catch (err) {
        if (signal.aborted) return;
        log.warn({ err, retries: queue.numRequeues(key) }, this.#o.failure);
        queue.addRateLimited(key);
      } finally {
        queue.done(key);
      }
    }
  }
}
