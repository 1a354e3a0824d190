// Identity of the VirtualMachineInstanceMigration resource as KubeVirt serves it.

import { VMI_API_VERSION } from './group-version.js';

export const MIGRATION_API_VERSION = VMI_API_VERSION;
export const MIGRATION_KIND = 'VirtualMachineInstanceMigration';
export const MIGRATION_LIST_KIND = 'VirtualMachineInstanceMigrationList';
export const MIGRATION_PLURAL = 'virtualmachineinstancemigrations';
export const MIGRATION_SHORT_NAMES: readonly string[] = ['vmim', 'vmims'];
