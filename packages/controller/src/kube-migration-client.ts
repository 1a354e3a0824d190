// MigrationClient over the `kubevirt.io/v1` VirtualMachineInstanceMigration endpoints.

import { MIGRATION_PLURAL, VMI_GROUP, VMI_VERSION, type VirtualMachineInstanceMigration } from '@podvirt/api';
import { MERGE_PATCH, type KubeClient } from '@podvirt/kube-runtime';
import { apiFailure } from './api-failure.js';
import type { MigrationClient } from './cluster-roles.js';
import { isNotFound } from './controller-error.js';

function migrationPath(namespace: string, name: string): string {
  return `/apis/${VMI_GROUP}/${VMI_VERSION}/namespaces/${encodeURIComponent(namespace)}/${MIGRATION_PLURAL}/${encodeURIComponent(name)}`;
}

export class KubeMigrationClient implements MigrationClient {
  readonly #client: KubeClient;

  constructor(client: KubeClient) {
    this.#client = client;
  }

  async readMigration(namespace: string, name: string, signal?: AbortSignal): Promise<VirtualMachineInstanceMigration | undefined> {
    try {
      return await this.#client.request<VirtualMachineInstanceMigration>({ path: migrationPath(namespace, name), ...(signal === undefined ? {} : { signal }) });
    } catch (err) {
      const failure = apiFailure(err, `get migration ${namespace}/${name}`);
      if (isNotFound(failure)) return undefined;
      throw failure;
    }
  }

  async replaceMigrationStatus(vmim: VirtualMachineInstanceMigration, signal?: AbortSignal): Promise<VirtualMachineInstanceMigration> {
    const namespace = vmim.metadata.namespace ?? '';
    const name = vmim.metadata.name ?? '';
    try {
      return await this.#client.request<VirtualMachineInstanceMigration>({
        method: 'PUT', path: `${migrationPath(namespace, name)}/status`, body: vmim, ...(signal === undefined ? {} : { signal }),
      });
    } catch (err) {
      throw apiFailure(err, `update status of migration ${namespace}/${name}`);
    }
  }

  async setMigrationFinalizers(namespace: string, name: string, finalizers: readonly string[], resourceVersion: string | undefined, signal?: AbortSignal): Promise<VirtualMachineInstanceMigration> {
    const metadata = { finalizers, ...(resourceVersion === undefined ? {} : { resourceVersion }) };
    try {
      return await this.#client.request<VirtualMachineInstanceMigration>({
        method: 'PATCH', path: migrationPath(namespace, name), body: { metadata }, contentType: MERGE_PATCH, ...(signal === undefined ? {} : { signal }),
      });
    } catch (err) {
      throw apiFailure(err, `patch migration ${namespace}/${name}`);
    }
  }
}
