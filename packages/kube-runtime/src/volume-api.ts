// `@podvirt/api`'s VolumeApi over this client: the reads and guarded writes of a volume hotplug
// request, shared by podvirt-api's addvolume/removevolume subresources and `podvirtctl
// addvolume|removevolume`. A merge patch replaces a list whole: the spec's volumes and disks are
// written as the edit left them, guarded by the object's resourceVersion.
import { VM_RESOURCE, VMI_RESOURCE, type HotplugSpec, type VirtualMachine, type VirtualMachineInstance, type VolumeApi } from '@podvirt/api';
import type { KubeClient } from './kube-client.js';
import { ResourceClient } from './resource-client.js';
import { staleOn409 } from './vm-state-api.js';

/** The merge patch of a spec's volumes and disks. */
export function volumesPatch(spec: HotplugSpec): { volumes: unknown; domain: { devices: { disks: unknown } } } {
  return { volumes: spec.volumes ?? [], domain: { devices: { disks: spec.domain.devices?.disks ?? [] } } };
}

export class KubeVolumeApi implements VolumeApi {
  readonly #vms: ResourceClient<VirtualMachine>;
  readonly #vmis: ResourceClient<VirtualMachineInstance>;

  constructor(client: KubeClient) {
    this.#vms = new ResourceClient<VirtualMachine>(client, VM_RESOURCE);
    this.#vmis = new ResourceClient<VirtualMachineInstance>(client, VMI_RESOURCE);
  }

  readVmi(namespace: string, name: string, signal: AbortSignal): Promise<VirtualMachineInstance | undefined> {
    return this.#vmis.get(namespace, name, signal);
  }

  readVm(namespace: string, name: string, signal: AbortSignal): Promise<VirtualMachine | undefined> {
    return this.#vms.get(namespace, name, signal);
  }

  patchVmiVolumes(namespace: string, name: string, spec: HotplugSpec, resourceVersion: string | undefined, signal: AbortSignal): Promise<'written' | 'stale'> {
    return staleOn409(this.#vmis.mergePatch(namespace, name, { metadata: { resourceVersion }, spec: volumesPatch(spec) }, signal));
  }

  patchVmVolumes(namespace: string, name: string, spec: HotplugSpec, resourceVersion: string | undefined, signal: AbortSignal): Promise<'written' | 'stale'> {
    return staleOn409(this.#vms.mergePatch(namespace, name, { metadata: { resourceVersion }, spec: { template: { spec: volumesPatch(spec) } } }, signal));
  }
}
