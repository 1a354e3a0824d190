// The controller's view of VirtualMachines: a kube-runtime informer (relist on 410, retry with
// backoff, resync every period, which repairs whatever a lost event or a failed write left
// behind), served as VmStore. Kept apart from ClusterInformers so the VM controller is one
// removable part.

import { VM_RESOURCE, type VirtualMachine } from '@podvirt/api';
import { Informer, ResourceClient, type KubeClient } from '@podvirt/kube-runtime';
import type { Logger } from 'pino';
import type { VmStore } from './cluster-roles.js';
import { DEFAULT_RESTART_DELAY_MS, DEFAULT_RESYNC_MS } from './cluster-informers.js';

export interface VmInformerOptions {
  readonly client: KubeClient;
  readonly log: Logger;
  readonly namespace?: string | undefined;
  readonly onVm: (vm: VirtualMachine) => void;
  readonly resyncMs?: number;
}

export class VmInformer implements VmStore {
  readonly #vms: Informer<VirtualMachine>;

  constructor(options: VmInformerOptions) {
    this.#vms = new Informer<VirtualMachine>({
      source: new ResourceClient<VirtualMachine>(options.client, VM_RESOURCE).listWatch(options.namespace),
      // Deletions too: the sync of a VM that is gone forgets its expectations.
      onEvent: (_type, vm) => options.onVm(vm),
      log: options.log.child({ informer: 'virtualmachines' }),
      resyncPeriodMs: options.resyncMs ?? DEFAULT_RESYNC_MS,
      retryMs: DEFAULT_RESTART_DELAY_MS,
    });
  }

  getVm(namespace: string, name: string): VirtualMachine | undefined {
    return this.#vms.get(`${namespace}/${name}`);
  }

  listVms(): VirtualMachine[] {
    return this.#vms.list();
  }

  async start(signal: AbortSignal): Promise<void> {
    this.#vms.start();
    await this.#vms.waitForSync(signal);
  }

  /** Stops the watch and its timers. Idempotent. */
  close(): Promise<void> {
    return this.#vms.close();
  }
}
