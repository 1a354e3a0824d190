// Turns informer events into keys (`namespace/name` of a VMI) and runs N workers over a keyed
// work queue; each key is reconciled by syncVmi. A failed sync is retried with per-key
// exponential backoff; one key is never synced by two workers at once.

import type { V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import { VMI_KIND, vmiLogBindings, type VirtualMachineInstance } from '@podvirt/api';
import type { Logger } from 'pino';
import { claimNames } from '../decide/claim-check.js';
import { KeyedWorkers, type QueueObserver } from './keyed-workers.js';
import type { PodChange } from '../kube/cluster-informers.js';
import { syncVmi, type SyncDeps } from './sync-vmi.js';
import { objectKey, splitObjectKey, type ItemBackoffOptions } from '@podvirt/kube-runtime';

export interface VmiControllerOptions {
  readonly deps: SyncDeps;
  readonly workers: number;
  readonly log: Logger;
  readonly queue?: ItemBackoffOptions;
  /** Sees the work queue at work (metrics). */
  readonly queueObserver?: QueueObserver;
}

/** The key of the VMI controlling `pod`, if any. */
export function ownerKey(pod: V1Pod): string | undefined {
  const owner = pod.metadata?.ownerReferences?.find((ref) => ref.controller === true && ref.kind === VMI_KIND);
  return owner ? `${pod.metadata?.namespace ?? ''}/${owner.name}` : undefined;
}

export class VmiController {
  readonly #o: VmiControllerOptions;
  readonly #workers: KeyedWorkers;

  constructor(options: VmiControllerOptions) {
    this.#o = options;
    this.#workers = new KeyedWorkers({
      workers: options.workers,
      ...(options.queue === undefined ? {} : { queue: options.queue }),
      keys: () => options.deps.vmis.list().map(objectKey),
      sync: (key, log, signal) => syncVmi({ ...options.deps, log }, key, signal),
      log: (key) => options.log.child(vmiLogBindings(splitObjectKey(key))),
      failure: 'reconcile failed, requeueing',
      ...(options.queueObserver === undefined ? {} : { observer: options.queueObserver }),
    });
  }

  /** Keys waiting for a worker (metrics). */
  get queueDepth(): number {
    return this.#workers.depth;
  }

  vmiChanged(vmi: VirtualMachineInstance): void {
    this.#workers.add(objectKey(vmi));
  }

  podChanged(pod: V1Pod, change: PodChange): void {
    const key = ownerKey(pod);
    if (key === undefined) return;
    // Counted even while not leading: a creation of our last term may arrive late.
    if (change === 'add') this.#o.deps.expectations.creationObserved(key);
    this.#workers.add(key);
  }

  /** A claim changed (appeared, became Bound): every VMI in its namespace that uses it looks again. */
  claimChanged(claim: V1PersistentVolumeClaim): void {
    const namespace = claim.metadata?.namespace;
    const name = claim.metadata?.name ?? '';
    for (const vmi of this.#o.deps.vmis.list()) {
      if (vmi.metadata.namespace === namespace && claimNames(vmi).includes(name)) this.#workers.add(objectKey(vmi));
    }
  }

  /**
   * Reconciles until `signal` aborts: every VMI in the store first, then whatever changes.
   * Resolves when the workers have finished their current keys.
   */
  run(signal: AbortSignal): Promise<void> {
    return this.#workers.run(signal);
  }
}
