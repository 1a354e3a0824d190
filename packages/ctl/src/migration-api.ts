// The slice of the Kubernetes API `podvirtctl migrate` and `migrate-cancel` use, over
// kube-runtime's client (the one client stack): read a VMI, create, list and delete
// VirtualMachineInstanceMigrations. A VMI or migration that is not there is `undefined`, not an
// error; every other refusal of the API server comes back as kube-runtime's KubeApiError.
import {
  MIGRATION_API_VERSION,
  MIGRATION_KIND,
  MIGRATION_PLURAL,
  VMI_GROUP,
  VMI_PLURAL,
  VMI_VERSION,
  type VirtualMachineInstance,
  type VirtualMachineInstanceMigration,
} from '@podvirt/api';
import { isKubeApiError, type KubeClient } from '@podvirt/kube-runtime';

export interface MigrationApi {
  readVmi(namespace: string, name: string, signal: AbortSignal): Promise<VirtualMachineInstance | undefined>;
  createMigration(vmim: VirtualMachineInstanceMigration, signal: AbortSignal): Promise<VirtualMachineInstanceMigration>;
  listMigrations(namespace: string, signal: AbortSignal): Promise<VirtualMachineInstanceMigration[]>;
  /** False when it was gone already. */
  deleteMigration(namespace: string, name: string, signal: AbortSignal): Promise<boolean>;
}

/** virtctl's prefix for the migrations it creates; the API server adds a random suffix. */
export const MIGRATION_NAME_PREFIX = 'kubevirt-migrate-vm-';

function base(namespace: string, plural: string): string {
  return `/apis/${VMI_GROUP}/${VMI_VERSION}/namespaces/${encodeURIComponent(namespace)}/${plural}`;
}

export function migrationFor(namespace: string, vmiName: string): VirtualMachineInstanceMigration {
  return { apiVersion: MIGRATION_API_VERSION, kind: MIGRATION_KIND, metadata: { generateName: MIGRATION_NAME_PREFIX, namespace }, spec: { vmiName } };
}

export class KubeMigrationApi implements MigrationApi {
  constructor(private readonly client: KubeClient) {}

  async readVmi(namespace: string, name: string, signal: AbortSignal): Promise<VirtualMachineInstance | undefined> {
    try {
      return await this.client.request<VirtualMachineInstance>({ path: `${base(namespace, VMI_PLURAL)}/${encodeURIComponent(name)}`, signal });
    } catch (err) {
      if (isKubeApiError(err, 'KUBE_ERR_NOT_FOUND')) return undefined;
      throw err;
    }
  }

  createMigration(vmim: VirtualMachineInstanceMigration, signal: AbortSignal): Promise<VirtualMachineInstanceMigration> {
    return this.client.request<VirtualMachineInstanceMigration>({ method: 'POST', path: base(vmim.metadata.namespace ?? '', MIGRATION_PLURAL), body: vmim, signal });
  }

  async listMigrations(namespace: string, signal: AbortSignal): Promise<VirtualMachineInstanceMigration[]> {
    const list = await this.client.request<{ items?: VirtualMachineInstanceMigration[] }>({ path: base(namespace, MIGRATION_PLURAL), signal });
    return list.items ?? [];
  }

  async deleteMigration(namespace: string, name: string, signal: AbortSignal): Promise<boolean> {
    try {
      await this.client.request({ method: 'DELETE', path: `${base(namespace, MIGRATION_PLURAL)}/${encodeURIComponent(name)}`, signal });
      return true;
    } catch (err) {
      if (isKubeApiError(err, 'KUBE_ERR_NOT_FOUND')) return false;
      throw err;
    }
  }
}
