// `@podvirt/api`'s VmStateApi over this client: the reads and guarded writes of a VM start, stop
// or restart, shared by podvirt-api's VM subresources and `podvirtctl start|stop|restart vm`.
import { VM_RESOURCE, VMI_RESOURCE, type VirtualMachine, type VirtualMachineInstance, type VmSpec, type VmStateApi } from '@podvirt/api';
import { isKubeApiError } from './kube-api-error.js';
import type { KubeClient } from './kube-client.js';
import { ResourceClient } from './resource-client.js';

export class KubeVmStateApi implements VmStateApi {
  readonly #vms: ResourceClient<VirtualMachine>;
  readonly #vmis: ResourceClient<VirtualMachineInstance>;

  constructor(client: KubeClient) {
    this.#vms = new ResourceClient<VirtualMachine>(client, VM_RESOURCE);
    this.#vmis = new ResourceClient<VirtualMachineInstance>(client, VMI_RESOURCE);
  }

  readVm(namespace: string, name: string, signal: AbortSignal): Promise<VirtualMachine | undefined> {
    return this.#vms.get(namespace, name, signal);
  }

  readVmi(namespace: string, name: string, signal: AbortSignal): Promise<VirtualMachineInstance | undefined> {
    return this.#vmis.get(namespace, name, signal);
  }

  replaceVmStatus(vm: VirtualMachine, signal: AbortSignal): Promise<'written' | 'stale'> {
    return staleOn409(this.#vms.replaceStatus(vm, signal));
  }

  patchVmSpec(namespace: string, name: string, spec: Partial<Pick<VmSpec, 'running' | 'runStrategy'>>, resourceVersion: string | undefined, signal: AbortSignal): Promise<'written' | 'stale'> {
    return staleOn409(this.#vms.mergePatch(namespace, name, { metadata: { resourceVersion }, spec }, signal));
  }

  async setVmiGracePeriod(namespace: string, name: string, seconds: number, signal: AbortSignal): Promise<void> {
    await this.#vmis.mergePatch(namespace, name, { spec: { terminationGracePeriodSeconds: seconds } }, signal);
  }
}

/** A guarded write: 'stale' when the object changed since it was read (409). */
export async function staleOn409(write: Promise<unknown>): Promise<'written' | 'stale'> {
  try {
    await write;
    return 'written';
  } catch (err) {
    if (isKubeApiError(err) && err.status === 409) return 'stale';
    throw err;
  }
}
