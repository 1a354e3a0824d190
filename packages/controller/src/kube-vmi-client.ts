// VmiClient over the custom-objects API of `kubevirt.io/v1`.

import { CustomObjectsApi, PatchStrategy, setHeaderOptions, type KubeConfig } from '@kubernetes/client-node';
import { VMI_GROUP, VMI_PLURAL, VMI_VERSION, type VirtualMachineInstance } from '@podvirt/api';
import { apiFailure } from './api-failure.js';
import type { MetadataPatch, VmiClient } from './cluster-roles.js';
import { isNotFound } from './controller-error.js';

export class KubeVmiClient implements VmiClient {
  readonly #api: CustomObjectsApi;

  constructor(kubeConfig: KubeConfig) {
    this.#api = kubeConfig.makeApiClient(CustomObjectsApi);
  }

  async read(namespace: string, name: string): Promise<VirtualMachineInstance | undefined> {
    try {
      const vmi: unknown = await this.#api.getNamespacedCustomObject({ group: VMI_GROUP, version: VMI_VERSION, plural: VMI_PLURAL, namespace, name });
      return vmi as VirtualMachineInstance;
    } catch (err) {
      const failure = apiFailure(err, `get VMI ${namespace}/${name}`);
      if (isNotFound(failure)) return undefined;
      throw failure;
    }
  }

  async replaceStatus(vmi: VirtualMachineInstance): Promise<VirtualMachineInstance> {
    const namespace = vmi.metadata.namespace ?? '';
    const name = vmi.metadata.name ?? '';
    try {
      const body = vmi as unknown as object;
      const written: unknown = await this.#api.replaceNamespacedCustomObjectStatus({ group: VMI_GROUP, version: VMI_VERSION, plural: VMI_PLURAL, namespace, name, body });
      return written as VirtualMachineInstance;
    } catch (err) {
      throw apiFailure(err, `update status of VMI ${namespace}/${name}`);
    }
  }

  async patchMetadata(namespace: string, name: string, patch: MetadataPatch): Promise<VirtualMachineInstance> {
    const metadata = {
      ...(patch.labels === undefined ? {} : { labels: patch.labels }),
      ...(patch.finalizers === undefined ? {} : { finalizers: patch.finalizers }),
      ...(patch.resourceVersion === undefined ? {} : { resourceVersion: patch.resourceVersion }),
    };
    try {
      const patched: unknown = await this.#api.patchNamespacedCustomObject(
        { group: VMI_GROUP, version: VMI_VERSION, plural: VMI_PLURAL, namespace, name, body: { metadata } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
      return patched as VirtualMachineInstance;
    } catch (err) {
      throw apiFailure(err, `patch VMI ${namespace}/${name}`);
    }
  }
}
