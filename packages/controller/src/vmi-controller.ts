// Turns informer events into keys (`namespace/name` of a VMI) and runs N workers over a keyed
// work queue; each key is reconciled by syncVmi. A failed sync is retried with per-key
// exponential backoff; one key is never synced by two workers at once.

import type { V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import { VMI_KIND, type VirtualMachineInstance } from '@podvirt/api';
import type { Logger } from 'pino';
import { claimNames } from './claim-check.js';
import type { PodChange } from './cluster-informers.js';
import { splitKey, syncVmi, type SyncDeps } from './sync-vmi.js';
import { WorkQueue, type ItemBackoffOptions } from '@podvirt/kube-runtime';

export interface VmiControllerOptions {
  readonly deps: SyncDeps;
  readonly workers: number;
  readonly log: Logger;
  readonly queue?: ItemBackoffOptions;
}

export function vmiKey(vmi: Pick<VirtualMachineInstance, 'metadata'>): string {
  return `${vmi.metadata.namespace ?? ''}/${vmi.metadata.name ?? ''}`;
}

/** The key of the VMI controlling `pod`, if any. */
export function ownerKey(pod: V1Pod): string | undefined {
  const owner = pod.metadata?.ownerReferences?.find((ref) => ref.controller === true && ref.kind === VMI_KIND);
  return owner ? `${pod.metadata?.namespace ?? ''}/${owner.name}` : undefined;
}

export class VmiController {
  readonly #o: VmiControllerOptions;
  #queue: WorkQueue | undefined;

  constructor(options: VmiControllerOptions) {
    this.#o = options;
  }

  vmiChanged(vmi: VirtualMachineInstance): void {
    this.#queue?.add(vmiKey(vmi));
  }

  podChanged(pod: V1Pod, change: PodChange): void {
    const key = ownerKey(pod);
    if (key === undefined) return;
    // Counted even while not leading: a creation of our last term may arrive late.
    if (change === 'add') this.#o.deps.expectations.creationObserved(key);
    this.#queue?.add(key);
  }

  /** A claim changed (appeared, became Bound): every VMI in its namespace that uses it looks again. */
  claimChanged(claim: V1PersistentVolumeClaim): void {
    const namespace = claim.metadata?.namespace;
    const name = claim.metadata?.name ?? '';
    for (const vmi of this.#o.deps.vmis.list()) {
      if (vmi.metadata.namespace === namespace && claimNames(vmi).includes(name)) this.#queue?.add(vmiKey(vmi));
    }
  }

  /**
   * Reconciles until `signal` aborts: every VMI in the store first, then whatever changes.
   * Resolves when the workers have finished their current keys.
   */
  async run(signal: AbortSignal): Promise<void> {
    if (signal.aborted) return;
    const queue = new WorkQueue(this.#o.queue);
    this.#queue = queue;
    const onAbort = (): void => queue.shutDown();
    signal.addEventListener('abort', onAbort, { once: true });
    for (const vmi of this.#o.deps.vmis.list()) queue.add(vmiKey(vmi));
    const workers = Array.from({ length: Math.max(1, this.#o.workers) }, () => this.#work(queue, signal));
    await Promise.all(workers);
    signal.removeEventListener('abort', onAbort);
    if (this.#queue === queue) this.#queue = undefined;
  }

  async #work(queue: WorkQueue, signal: AbortSignal): Promise<void> {
    for (;;) {
      const key = await queue.get(signal);
      if (key === undefined) return;
      const log = this.#o.log.child(splitKey(key));
      try {
        const result = await syncVmi({ ...this.#o.deps, log }, key, signal);
        queue.forget(key);
        if (result.requeueAfterMs !== undefined) queue.addAfter(key, result.requeueAfterMs);
      } catch (err) {
        if (signal.aborted) return;
        log.warn({ err, retries: queue.numRequeues(key) }, 'reconcile failed, requeueing');
        queue.addRateLimited(key);
      } finally {
        queue.done(key);
      }
    }
  }
}
