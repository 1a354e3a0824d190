// Which part of a live migration this node plays for a VMI, from the VMI alone (the controller
// writes `status.migrationState` and hands `status.nodeName` over at the end). The source is the
// node that owns the VMI while a migration names another node as target; the target is the node
// the migration names until the hand-over makes it the owner.

import type { VirtualMachineInstance, VmiMigrationState } from '@podvirt/api';

export type MigrationRole = 'source' | 'target' | 'none';

export function migrationRole(vmi: VirtualMachineInstance, nodeName: string): MigrationRole {
  const ms = vmi.status?.migrationState;
  if (ms?.migrationUid === undefined || ms.targetNode === undefined || ms.targetNode === ms.sourceNode) return 'none';
  const owner = vmi.status?.nodeName;
  if (owner === nodeName) return ms.sourceNode === nodeName ? 'source' : 'none';
  return ms.targetNode === nodeName ? 'target' : 'none';
}

/** The source reported the end (either way); the controller hands over or fails it next. */
export function migrationEnded(ms: VmiMigrationState | undefined): boolean {
  return ms?.completed === true || ms?.failed === true;
}
