// The slice of the Kubernetes API `podvirtctl addvolume|removevolume` use, over kube-runtime's
// client: read a VMI and its VM, and write the hotplug edit of a VMI's spec (and, with
// --persist, of its VM's template) as a merge patch guarded by the object's resourceVersion.
// A subresource call (KubeVirt's addvolume/removevolume) can take this interface's place later.
import { VM_RESOURCE, VMI_RESOURCE, type AddVolumeOptions, type HotplugSpec, type RemoveVolumeOptions, type VirtualMachine, type VirtualMachineInstance } from '@podvirt/api';
import { ResourceClient, type KubeClient } from '@podvirt/kube-runtime';

/** A hotplug request as KubeVirt's subresources take it. */
export type VolumeRequest = { readonly command: 'addvolume'; readonly options: AddVolumeOptions } | { readonly command: 'removevolume'; readonly options: RemoveVolumeOptions };

export interface VolumeApi {
  readVmi(namespace: string, name: string, signal: AbortSignal): Promise<VirtualMachineInstance | undefined>;
  readVm(namespace: string, name: string, signal: AbortSignal): Promise<VirtualMachine | undefined>;
  /** Writes the VMI's volumes and disks; a 409 when `resourceVersion` is stale. */
  patchVmiVolumes(namespace: string, name: string, spec: HotplugSpec, resourceVersion: string | undefined, signal: AbortSignal): Promise<void>;
  /** The same on the VM's template. */
  patchVmVolumes(namespace: string, name: string, spec: HotplugSpec, resourceVersion: string | undefined, signal: AbortSignal): Promise<void>;
}

/** The merge patch of a spec's volumes and disks (a merge patch replaces a list whole). */
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

  async patchVmiVolumes(namespace: string, name: string, spec: HotplugSpec, resourceVersion: string | undefined, signal: AbortSignal): Promise<void> {
    await this.#vmis.mergePatch(namespace, name, { metadata: { resourceVersion }, spec: volumesPatch(spec) }, signal);
  }

  async patchVmVolumes(namespace: string, name: string, spec: HotplugSpec, resourceVersion: string | undefined, signal: AbortSignal): Promise<void> {
    await this.#vms.mergePatch(namespace, name, { metadata: { resourceVersion }, spec: { template: { spec: volumesPatch(spec) } } }, signal);
  }
}
