// Turns VirtualMachine and VMI events into VM keys and runs workers over a keyed work queue;
// each key is reconciled by syncVm. A VM looks again when it changes and when the VMI it controls
// changes or goes away, and when an ownerless VMI of its name appears (to adopt it) or one still
// carrying the VM controller's finalizer changes (to take it off).

import { VM_CONTROLLER_FINALIZER, VM_KIND, type VirtualMachine, type VirtualMachineInstance } from '@podvirt/api';
import type { ItemBackoffOptions } from '@podvirt/kube-runtime';
import type { Logger } from 'pino';
import { KeyedWorkers } from './keyed-workers.js';
import { syncVm, vmKey, type VmSyncDeps } from './sync-vm.js';

export interface VmControllerOptions {
  readonly deps: Omit<VmSyncDeps, 'log' | 'written'>;
  readonly workers: number;
  readonly log: Logger;
  readonly queue?: ItemBackoffOptions;
}

export class VmController {
  readonly #workers: KeyedWorkers;
  readonly #vms: VmControllerOptions['deps']['vms'];

  constructor(options: VmControllerOptions) {
    this.#vms = options.deps.vms;
    const written: VmSyncDeps['written'] = new Map();
    this.#workers = new KeyedWorkers({
      workers: options.workers,
      ...(options.queue === undefined ? {} : { queue: options.queue }),
      keys: () => options.deps.vms.listVms().map(vmKey),
      sync: (key, log, signal) => syncVm({ ...options.deps, written, log }, key, signal),
      log: (key) => options.log.child({ vm: key }),
      failure: 'VM reconcile failed, requeueing',
    });
  }

  vmChanged(vm: VirtualMachine): void {
    this.#workers.add(vmKey(vm));
  }

  /** The VM controlling `vmi` looks again; or, for a VMI no VM controls, the VM of its name (or its finalizer's owner). */
  vmiChanged(vmi: VirtualMachineInstance): void {
    const namespace = vmi.metadata.namespace ?? '';
    const owner = vmi.metadata.ownerReferences?.find((ref) => ref.controller === true && ref.kind === VM_KIND);
    if (owner !== undefined) {
      this.#workers.add(`${namespace}/${owner.name}`);
      return;
    }
    const name = vmi.metadata.name ?? '';
    if (vmi.metadata.finalizers?.includes(VM_CONTROLLER_FINALIZER) === true || this.#vms.getVm(namespace, name) !== undefined) this.#workers.add(`${namespace}/${name}`);
  }

  /** Reconciles until `signal` aborts: every VM first, then whatever changes. */
  run(signal: AbortSignal): Promise<void> {
    return this.#workers.run(signal);
  }
}
