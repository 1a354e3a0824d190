// How an Event names a VirtualMachineInstanceMigration (core/v1 ObjectReference), the shape
// vmiReference gives a VMI.

import { MIGRATION_API_VERSION, MIGRATION_KIND } from './migration-kind.js';
import type { VirtualMachineInstanceMigration } from './types/migration.js';
import { objectReference, type ObjectReference } from './vmi-reference.js';

export function migrationReference(vmim: VirtualMachineInstanceMigration): ObjectReference {
  return objectReference(MIGRATION_API_VERSION, MIGRATION_KIND, vmim.metadata);
}
