// VmiApi over the real API server through kube-runtime's ResourceClient: a cluster-wide list and
// watch of the VMIs labelled for this node, get, and status writes to the status subresource.

import { ResourceClient, type KubeClient } from '@podvirt/kube-runtime';
import { VMI_RESOURCE, type VirtualMachineInstance } from '@podvirt/api';
import { fromKubeError } from './kube-error.js';
import type { VmiApi, VmiList, VmiWatchEvent } from './vmi-api.js';

export class KubeVmiApi implements VmiApi {
  readonly #vmis: ResourceClient<VirtualMachineInstance>;

  constructor(client: KubeClient) {
    this.#vmis = new ResourceClient<VirtualMachineInstance>(client, VMI_RESOURCE);
  }

  async list(labelSelector: string, signal: AbortSignal): Promise<VmiList> {
    try {
      return await this.#vmis.list(undefined, { labelSelector }, signal);
    } catch (err) {
      throw fromKubeError(err, 'list VMIs');
    }
  }

  async watch(labelSelector: string, resourceVersion: string, onEvent: (event: VmiWatchEvent) => void, signal: AbortSignal): Promise<void> {
    try {
      await this.#vmis.listWatch(undefined, { labelSelector }).watch(resourceVersion, onEvent, signal);
    } catch (err) {
      throw fromKubeError(err, 'watch VMIs');
    }
  }

  async get(namespace: string, name: string, signal: AbortSignal): Promise<VirtualMachineInstance | undefined> {
    try {
      return await this.#vmis.get(namespace, name, signal);
    } catch (err) {
      throw fromKubeError(err, `get VMI ${namespace}/${name}`);
    }
  }

  async updateStatus(vmi: VirtualMachineInstance, signal: AbortSignal): Promise<VirtualMachineInstance> {
    try {
      return await this.#vmis.replaceStatus(vmi, signal);
    } catch (err) {
      throw fromKubeError(err, `update status of VMI ${vmi.metadata.namespace ?? ''}/${vmi.metadata.name ?? ''}`);
    }
  }
}
