// The slice of the Kubernetes API `podvirtctl migrate` and `migrate-cancel` use, over
// kube-runtime's client (the one client stack): read a VMI, create, list and delete
// VirtualMachineInstanceMigrations. A VMI or migration that is not there is `undefined`, not an
// error; every other refusal of the API server comes back as kube-runtime's KubeApiError.
import { MIGRATION_RESOURCE, VMI_RESOURCE, type VirtualMachineInstance, type VirtualMachineInstanceMigration } from '@podvirt/api';
import { ResourceClient, type KubeClient } from '@podvirt/kube-runtime';

export interface MigrationApi {
  readVmi(namespace: string, name: string, signal: AbortSignal): Promise<VirtualMachineInstance | undefined>;
  createMigration(vmim: VirtualMachineInstanceMigration, signal: AbortSignal): Promise<VirtualMachineInstanceMigration>;
  listMigrations(namespace: string, signal: AbortSignal): Promise<VirtualMachineInstanceMigration[]>;
  /** False when it was gone already. */
  deleteMigration(namespace: string, name: string, signal: AbortSignal): Promise<boolean>;
}

export class KubeMigrationApi implements MigrationApi {
  readonly #vmis: ResourceClient<VirtualMachineInstance>;
  readonly #migrations: ResourceClient<VirtualMachineInstanceMigration>;

  constructor(client: KubeClient) {
    this.#vmis = new ResourceClient<VirtualMachineInstance>(client, VMI_RESOURCE);
    this.#migrations = new ResourceClient<VirtualMachineInstanceMigration>(client, MIGRATION_RESOURCE);
  }

  readVmi(namespace: string, name: string, signal: AbortSignal): Promise<VirtualMachineInstance | undefined> {
    return this.#vmis.get(namespace, name, signal);
  }

  createMigration(vmim: VirtualMachineInstanceMigration, signal: AbortSignal): Promise<VirtualMachineInstanceMigration> {
    return this.#migrations.create(vmim.metadata.namespace ?? '', vmim, signal);
  }

  async listMigrations(namespace: string, signal: AbortSignal): Promise<VirtualMachineInstanceMigration[]> {
    return (await this.#migrations.list(namespace, {}, signal)).items;
  }

  deleteMigration(namespace: string, name: string, signal: AbortSignal): Promise<boolean> {
    return this.#migrations.delete(namespace, name, {}, signal);
  }
}
