// Identity of the VirtualMachineInstanceMigration resource as KubeVirt serves it.

import { VMI_API_VERSION, VMI_GROUP, VMI_VERSION } from './group-version.js';
import type { VirtualMachineInstanceMigration } from './types/migration.js';

export const MIGRATION_API_VERSION = VMI_API_VERSION;
export const MIGRATION_KIND = 'VirtualMachineInstanceMigration';
export const MIGRATION_LIST_KIND = 'VirtualMachineInstanceMigrationList';
export const MIGRATION_PLURAL = 'virtualmachineinstancemigrations';
export const MIGRATION_SHORT_NAMES: readonly string[] = ['vmim', 'vmims'];

/** Where migrations live in the REST API, as `@podvirt/kube-runtime`'s ResourceClient takes it. */
export const MIGRATION_RESOURCE = { group: VMI_GROUP, version: VMI_VERSION, plural: MIGRATION_PLURAL, namespaced: true } as const;

/** virtctl's prefix for the migrations it and KubeVirt's `migrate` subresource create; the API server adds a random suffix. */
export const MIGRATION_NAME_PREFIX = 'kubevirt-migrate-vm-';

/** The migration `podvirtctl migrate` and podvirt-api's `virtualmachines/migrate` create for a VMI. */
export function migrationFor(namespace: string, vmiName: string): VirtualMachineInstanceMigration {
  return { apiVersion: MIGRATION_API_VERSION, kind: MIGRATION_KIND, metadata: { generateName: MIGRATION_NAME_PREFIX, namespace }, spec: { vmiName } };
}
