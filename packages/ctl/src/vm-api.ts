// The slice of the Kubernetes API `podvirtctl start|stop|restart vm` use, over kube-runtime's
// client: read a VM and its VMI, write the VM's status (its stateChangeRequests) and its
// strategy, and shorten a VMI's grace period before a forced stop. A VM or VMI that is not there
// is `undefined`; every other refusal of the API server comes back as kube-runtime's KubeApiError.
import { VM_RESOURCE, VMI_RESOURCE, type VirtualMachine, type VirtualMachineInstance, type VmSpec } from '@podvirt/api';
import { ResourceClient, type KubeClient } from '@podvirt/kube-runtime';

export interface VmApi {
  readVm(namespace: string, name: string, signal: AbortSignal): Promise<VirtualMachine | undefined>;
  readVmi(namespace: string, name: string, signal: AbortSignal): Promise<VirtualMachineInstance | undefined>;
  /** PUT of the status subresource, guarded by the VM's resourceVersion. */
  replaceVmStatus(vm: VirtualMachine, signal: AbortSignal): Promise<VirtualMachine>;
  /** A merge patch of spec.runStrategy / spec.running, guarded by `resourceVersion`. */
  patchVmSpec(namespace: string, name: string, spec: Partial<Pick<VmSpec, 'running' | 'runStrategy'>>, resourceVersion: string | undefined, signal: AbortSignal): Promise<VirtualMachine>;
  setVmiGracePeriod(namespace: string, name: string, seconds: number, signal: AbortSignal): Promise<void>;
}

export class KubeVmApi implements VmApi {
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

  replaceVmStatus(vm: VirtualMachine, signal: AbortSignal): Promise<VirtualMachine> {
    return this.#vms.replaceStatus(vm, signal);
  }

  patchVmSpec(namespace: string, name: string, spec: Partial<Pick<VmSpec, 'running' | 'runStrategy'>>, resourceVersion: string | undefined, signal: AbortSignal): Promise<VirtualMachine> {
    return this.#vms.mergePatch(namespace, name, { metadata: { resourceVersion }, spec }, signal);
  }

  async setVmiGracePeriod(namespace: string, name: string, seconds: number, signal: AbortSignal): Promise<void> {
    await this.#vmis.mergePatch(namespace, name, { spec: { terminationGracePeriodSeconds: seconds } }, signal);
  }
}
