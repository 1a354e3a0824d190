// How an Event names a VirtualMachineInstanceMigration (core/v1 ObjectReference), the shape
// vmiReference gives a VMI.

import { MIGRATION_API_VERSION, MIGRATION_KIND } from './migration-kind.js';
import type { VirtualMachineInstanceMigration } from './types/migration.js';
import type { VmiReference } from './vmi-reference.js';

export function migrationReference(vmim: VirtualMachineInstanceMigration): VmiReference {
  return {
    apiVersion: MIGRATION_API_VERSION,
    kind: MIGRATION_KIND,
    namespace: vmim.metadata.namespace ?? 'default',
    name: vmim.metadata.name ?? '',
    uid: vmim.metadata.uid ?? '',
    ...(vmim.metadata.resourceVersion === undefined ? {} : { resourceVersion: vmim.metadata.resourceVersion }),
  };
}
