// VmiClient over the `kubevirt.io/v1` VirtualMachineInstance endpoints.

import { VMI_GROUP, VMI_PLURAL, VMI_VERSION, type VirtualMachineInstance } from '@podvirt/api';
import { MERGE_PATCH, type KubeClient } from '@podvirt/kube-runtime';
import { apiFailure } from './api-failure.js';
import type { MetadataPatch, VmiClient } from './cluster-roles.js';
import { isNotFound } from './controller-error.js';

function vmiPath(namespace: string, name: string): string {
  return `/apis/${VMI_GROUP}/${VMI_VERSION}/namespaces/${encodeURIComponent(namespace)}/${VMI_PLURAL}/${encodeURIComponent(name)}`;
}

export class KubeVmiClient implements VmiClient {
  readonly #client: KubeClient;

  constructor(client: KubeClient) {
    this.#client = client;
  }

  async read(namespace: string, name: string, signal?: AbortSignal): Promise<VirtualMachineInstance | undefined> {
    try {
      return await this.#client.request<VirtualMachineInstance>({ path: vmiPath(namespace, name), ...(signal === undefined ? {} : { signal }) });
    } catch (err) {
      const failure = apiFailure(err, `get VMI ${namespace}/${name}`);
      if (isNotFound(failure)) return undefined;
      throw failure;
    }
  }

  async replaceStatus(vmi: VirtualMachineInstance, signal?: AbortSignal): Promise<VirtualMachineInstance> {
    const namespace = vmi.metadata.namespace ?? '';
    const name = vmi.metadata.name ?? '';
    try {
      return await this.#client.request<VirtualMachineInstance>({
        method: 'PUT', path: `${vmiPath(namespace, name)}/status`, body: vmi, ...(signal === undefined ? {} : { signal }),
      });
    } catch (err) {
      throw apiFailure(err, `update status of VMI ${namespace}/${name}`);
    }
  }

  async patchMetadata(namespace: string, name: string, patch: MetadataPatch, signal?: AbortSignal): Promise<VirtualMachineInstance> {
    const metadata = {
      ...(patch.labels === undefined ? {} : { labels: patch.labels }),
      ...(patch.finalizers === undefined ? {} : { finalizers: patch.finalizers }),
      ...(patch.resourceVersion === undefined ? {} : { resourceVersion: patch.resourceVersion }),
    };
    try {
      return await this.#client.request<VirtualMachineInstance>({
        method: 'PATCH', path: vmiPath(namespace, name), body: { metadata }, contentType: MERGE_PATCH, ...(signal === undefined ? {} : { signal }),
      });
    } catch (err) {
      throw apiFailure(err, `patch VMI ${namespace}/${name}`);
    }
  }
}
