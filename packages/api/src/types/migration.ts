// VirtualMachineInstanceMigration (kubevirt.io/v1) and the VMI's `status.migrationState`, the
// fields podvirt writes, spelled as KubeVirt spells them.

import type { MigrationPhase } from '../migration-phases.js';
import type { ObjectMeta } from './object-meta.js';
import type { VmiCondition } from './condition.js';

export interface MigrationSpec {
  /** The VMI to move; it must be in the migration's namespace. */
  vmiName: string;
}

export interface MigrationPhaseTransitionTimestamp {
  phase: MigrationPhase;
  phaseTransitionTimestamp: string;
}

export type MigrationAbortStatus = 'Succeeded' | 'Failed' | 'Aborting';
export type MigrationMode = 'PreCopy' | 'PostCopy' | 'Paused';

/** `status.migrationState` of a VMI (and of the migration): where it moves and how it ended. */
export interface VmiMigrationState {
  migrationUid?: string;
  sourceNode?: string;
  sourcePod?: string;
  targetNode?: string;
  targetPod?: string;
  /** The address the target handler's migration endpoint listens on (no port), written by the target handler. */
  targetNodeAddress?: string;
  /**
   * The target handler's listening ports: node-side port (as a string) → the pod-side stream it
   * reaches (`0` the libvirt connection, `49152` memory, `49153` disks over NBD), as KubeVirt.
   */
  targetDirectMigrationNodePorts?: Record<string, number>;
  /** The target handler saw the domain start after the switch. */
  targetNodeDomainDetected?: boolean;
  targetNodeDomainReadyTimestamp?: string;
  startTimestamp?: string;
  endTimestamp?: string;
  completed?: boolean;
  failed?: boolean;
  failureReason?: string;
  abortRequested?: boolean;
  abortStatus?: MigrationAbortStatus;
  mode?: MigrationMode;
}

export interface MigrationStatus {
  phase?: MigrationPhase;
  conditions?: VmiCondition[];
  phaseTransitionTimestamps?: MigrationPhaseTransitionTimestamp[];
  migrationState?: VmiMigrationState;
}

export interface VirtualMachineInstanceMigration {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  spec: MigrationSpec;
  status?: MigrationStatus;
}
