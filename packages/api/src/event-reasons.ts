// Reasons of the Kubernetes Events recorded against a VMI. The handler writes them with the
// same spelling as virt-handler so `kubectl get events --field-selector reason=Started` works.

export const EventReason = {
  /** Normal: the domain was defined (first successful sync). */
  Created: 'Created',
  /** Normal: the VMI reached Running. */
  Started: 'Started',
  /** Normal: the first graceful (ACPI) shutdown was signalled. */
  ShuttingDown: 'ShuttingDown',
  /** Normal: the domain is being killed or undefined. */
  Deleted: 'Deleted',
  /** Normal when shut down, Warning when crashed. */
  Stopped: 'Stopped',
  /** Warning: a sync with the launcher failed; the message is the error. */
  SyncFailed: 'SyncFailed',
  Paused: 'Paused',
  Unpaused: 'Unpaused',
  SoftRebooted: 'SoftRebooted',
  Reset: 'Reset',
  /** Warning: a filesystem freeze or thaw failed. */
  FreezeError: 'FreezeError',
  /** Warning: relayed from the launcher when the guest panics. */
  GuestPanicked: 'GuestPanicked',
  /** Warning: relayed from the launcher on a disk I/O error. */
  IOerror: 'IOerror',
  /** Warning: relayed from the launcher when the guest agent stops answering. */
  GuestAgentPingFailed: 'GuestAgentPingFailed',
  /** Normal: a live migration of the VMI started. */
  Migrating: 'Migrating',
  /** Normal: the VMI runs on its new node. */
  Migrated: 'Migrated',
  /** Warning: the migration ended without moving the VMI; the message says why. */
  MigrationFailed: 'MigrationFailed',
  /** Normal (evacuation): a migration away from the node an eviction named was created. */
  SuccessfulCreateVirtualMachineInstanceMigration: 'SuccessfulCreateVirtualMachineInstanceMigration',
  /** Warning (evacuation): that migration could not be created; the message says why. */
  FailedCreateVirtualMachineInstanceMigration: 'FailedCreateVirtualMachineInstanceMigration',
  /** Warning: an eviction was refused because the VMI must migrate (LiveMigrate) and cannot. */
  EvictionNotMigratable: 'EvictionNotMigratable',
} as const;

export type EventReason = (typeof EventReason)[keyof typeof EventReason];

export const EventType = {
  Normal: 'Normal',
  Warning: 'Warning',
} as const;

export type EventType = (typeof EventType)[keyof typeof EventType];
