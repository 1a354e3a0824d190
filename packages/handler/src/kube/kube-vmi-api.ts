// VmiApi over the real API server through the thin Kubernetes client: a cluster-wide list and
// watch of the VMIs labelled for this node, get, and status writes to the status subresource.

import { kubeListWatch, type KubeClient, type ListWatchSource } from '@podvirt/kube-runtime';
import { VMI_GROUP, VMI_PLURAL, VMI_VERSION, type VirtualMachineInstance } from '@podvirt/api';
import { isHandlerError } from '../handler-error.js';
import { fromKubeError } from './kube-error.js';
import type { VmiApi, VmiList, VmiWatchEvent } from './vmi-api.js';

const ROOT = `/apis/${VMI_GROUP}/${VMI_VERSION}`;

function vmiPath(namespace: string, name: string): string {
  return `${ROOT}/namespaces/${encodeURIComponent(namespace)}/${VMI_PLURAL}/${encodeURIComponent(name)}`;
}

export class KubeVmiApi implements VmiApi {
  readonly #client: KubeClient;

  constructor(client: KubeClient) {
    this.#client = client;
  }

  async list(labelSelector: string, signal: AbortSignal): Promise<VmiList> {
    try {
      return await this.#source(labelSelector).list(signal);
    } catch (err) {
      throw fromKubeError(err, 'list VMIs');
    }
  }

  async watch(labelSelector: string, resourceVersion: string, onEvent: (event: VmiWatchEvent) => void, signal: AbortSignal): Promise<void> {
    try {
      await this.#source(labelSelector).watch(resourceVersion, onEvent, signal);
    } catch (err) {
      throw fromKubeError(err, 'watch VMIs');
    }
  }

  #source(labelSelector: string): ListWatchSource<VirtualMachineInstance> {
    return kubeListWatch<VirtualMachineInstance>(this.#client, { path: `${ROOT}/${VMI_PLURAL}`, labelSelector });
  }

  async get(namespace: string, name: string, signal: AbortSignal): Promise<VirtualMachineInstance | undefined> {
    try {
      return await this.#client.request<VirtualMachineInstance>({ path: vmiPath(namespace, name), signal });
    } catch (err) {
      const e = fromKubeError(err, `get VMI ${namespace}/${name}`);
      if (isHandlerError(e, 'HANDLER_ERR_KUBE_NOT_FOUND')) return undefined;
      throw e;
    }
  }

  async updateStatus(vmi: VirtualMachineInstance, signal: AbortSignal): Promise<VirtualMachineInstance> {
    const namespace = vmi.metadata.namespace ?? '';
    const name = vmi.metadata.name ?? '';
    try {
      return await this.#client.request<VirtualMachineInstance>({ method: 'PUT', path: `${vmiPath(namespace, name)}/status`, body: vmi, signal });
    } catch (err) {
      throw fromKubeError(err, `update status of VMI ${namespace}/${name}`);
    }
  }
}
