// Turns VirtualMachine and VMI events into VM keys and runs workers over a keyed work queue;
// each key is reconciled by syncVm. A VM looks again when it changes and when the VMI it controls
// changes or goes away.

import { VM_KIND, type VirtualMachine, type VirtualMachineInstance } from '@podvirt/api';
import type { ItemBackoffOptions } from '@podvirt/kube-runtime';
import type { Logger } from 'pino';
import { KeyedWorkers, type QueueObserver } from './keyed-workers.js';
import { syncVm, vmKey, type VmSyncDeps } from './sync-vm.js';

export interface VmControllerOptions {
  readonly deps: Omit<VmSyncDeps, 'log' | 'written'>;
  readonly workers: number;
  readonly log: Logger;
  readonly queue?: ItemBackoffOptions;
  /** Sees each add and sync (the workqueue metrics). */
  readonly queueObserver?: QueueObserver;
}

export class VmController {
  readonly #workers: KeyedWorkers;

  constructor(options: VmControllerOptions) {
    const written: VmSyncDeps['written'] = new Map();
    this.#workers = new KeyedWorkers({
      workers: options.workers,
      ...(options.queue === undefined ? {} : { queue: options.queue }),
      keys: () => options.deps.vms.listVms().map(vmKey),
      sync: (key, log, signal) => syncVm({ ...options.deps, written, log }, key, signal),
      log: (key) => options.log.child({ vm: key }),
      failure: 'VM reconcile failed, requeueing',
      ...(options.queueObserver === undefined ? {} : { observer: options.queueObserver }),
    });
  }

  /** Keys waiting in the queue. */
  get queueDepth(): number {
    return this.#workers.depth;
  }

  vmChanged(vm: VirtualMachine): void {
    this.#workers.add(vmKey(vm));
  }

  /** The VM controlling `vmi`, if any, looks again. */
  vmiChanged(vmi: VirtualMachineInstance): void {
    const owner = vmi.metadata.ownerReferences?.find((ref) => ref.controller === true && ref.kind === VM_KIND);
    if (owner !== undefined) this.#workers.add(`${vmi.metadata.namespace ?? ''}/${owner.name}`);
  }

  /** Reconciles until `signal` aborts: every VM first, then whatever changes. */
  run(signal: AbortSignal): Promise<void> {
    return this.#workers.run(signal);
  }
}
