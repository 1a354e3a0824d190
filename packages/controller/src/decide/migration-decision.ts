// What decideMigration returns: the migration's desired status plus the writes that get the
// VMI, the target pod and the migration there. The executor (sync-migration.ts) carries it out.

import type { EventType, MigrationStatus, VmiMigrationState } from '@podvirt/api';

/** Why the controller ended a migration as Failed; the reason of its MigrationFailed Event. */
export const MigrationFailureReason = {
  /** The migration's spec is not one podvirt can run. */
  InvalidMigration: 'InvalidMigration',
  /** spec.vmiName names no VMI in the migration's namespace. */
  VMIDoesNotExist: 'VMIDoesNotExist',
  /** The VMI is not Running (or stopped running during the migration). */
  VMINotRunning: 'VMINotRunning',
  /** The VMI's LiveMigratable condition is not True. */
  NotLiveMigratable: 'NotLiveMigratable',
  /** The VMI was deleted during the migration. */
  VMIDeleted: 'VMIDeleted',
  /** The target launcher pod could not start, or ended, or was deleted. */
  TargetPodFailed: 'TargetPodFailed',
  /** No node could take the target pod in time. */
  TargetPodUnschedulable: 'TargetPodUnschedulable',
  /** The migration was deleted (cancelled) before it completed. */
  MigrationAborted: 'MigrationAborted',
  /** The source handler reported the migration failed. */
  MigrationFailed: 'MigrationFailed',
} as const;

export type MigrationFailureReason = (typeof MigrationFailureReason)[keyof typeof MigrationFailureReason];

/** Condition types on the migration. */
export const MigrationConditionType = {
  /** True: the controller refused the migration before anything was created; reason says why. */
  Rejected: 'MigrationRejected',
  /** True: the migration was deleted while running and the source was asked to abort (KubeVirt's). */
  AbortRequested: 'MigrationAbortRequested',
} as const;

/** Where an Event goes: the migration, the VMI, or both. */
export type EventTarget = 'migration' | 'vmi' | 'both';

export interface MigrationEvent {
  readonly on: EventTarget;
  readonly type: EventType;
  readonly reason: string;
  readonly message: string;
}

export interface VmiWrite {
  /** The VMI's whole new `status.migrationState`. */
  readonly migrationState: VmiMigrationState;
  /** The hand-over: the VMI's new `status.nodeName`. */
  readonly nodeName?: string;
}

export interface MigrationDecision {
  readonly status: MigrationStatus;
  readonly statusChanged: boolean;
  readonly addFinalizer: boolean;
  readonly removeFinalizer: boolean;
  readonly createTargetPod: boolean;
  /** Names of target pods to delete. */
  readonly deletePods: readonly string[];
  /** The VMI status fields to write, when they differ from the VMI's. */
  readonly vmi: VmiWrite | undefined;
  /** VMI labels to set (`null` removes one), when they differ from the VMI's. */
  readonly vmiLabels: Readonly<Record<string, string | null>> | undefined;
  readonly events: readonly MigrationEvent[];
  readonly requeueAfterMs: number | undefined;
}
