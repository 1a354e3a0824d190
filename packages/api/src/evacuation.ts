// An evacuation (a VMI an eviction marked with status.evacuationNodeName) as both podvirt-api's
// eviction webhook and podvirt-controller read it: the migrations the controller makes for it
// and the backoff between them after a failure. One place, so the controller's next try and the
// webhook's answer to `kubectl drain` agree.

import { MigrationPhase } from './migration-phases.js';
import type { VirtualMachineInstanceMigration } from './types/migration.js';

/** Marks the migrations podvirt-controller creates for an eviction; the value is the node left. */
export const EVACUATION_ANNOTATION = 'kubevirt.io/evacuationMigration';
/** The name prefix of those migrations (the API server adds a suffix). */
export const EVACUATION_NAME_PREFIX = 'kubevirt-evacuation-';

// After a failed evacuation migration the next waits 20 s, doubling per failure up to 5 minutes,
// so a target that cannot be had (every other node cordoned) is not hammered.
export const EVACUATION_BACKOFF_MS = 20_000;
export const EVACUATION_BACKOFF_MAX_MS = 300_000;

/** When `vmim` failed (ms since the epoch); undefined if it has not. */
export function migrationFailedAt(vmim: VirtualMachineInstanceMigration): number | undefined {
  if (vmim.status?.phase !== MigrationPhase.Failed) return undefined;
  const stamp = vmim.status.phaseTransitionTimestamps?.find((t) => t.phase === MigrationPhase.Failed)?.phaseTransitionTimestamp;
  const at = stamp === undefined ? undefined : Date.parse(stamp);
  return at !== undefined && Number.isFinite(at) ? at : undefined;
}

export interface EvacuationBackoff {
  /** How many evacuation migrations away from the node failed. */
  readonly failures: number;
  /** The last of them (the one that failed latest). */
  readonly last: VirtualMachineInstanceMigration | undefined;
  /** How long the next evacuation migration still waits; 0: it is due. */
  readonly leftMs: number;
}

/** The backoff of the evacuation away from `node`, from the VMI's migrations. */
export function evacuationBackoff(migrations: readonly VirtualMachineInstanceMigration[], node: string, now: Date): EvacuationBackoff {
  const failed = migrations
    .filter((m) => m.metadata.annotations?.[EVACUATION_ANNOTATION] === node)
    .map((m) => ({ m, at: migrationFailedAt(m) }))
    .filter((f): f is { m: VirtualMachineInstanceMigration; at: number } => f.at !== undefined)
    .sort((x, y) => x.at - y.at);
  const last = failed.at(-1);
  if (last === undefined) return { failures: 0, last: undefined, leftMs: 0 };
  const delay = Math.min(EVACUATION_BACKOFF_MS * 2 ** (failed.length - 1), EVACUATION_BACKOFF_MAX_MS);
  return { failures: failed.length, last: last.m, leftMs: Math.max(0, last.at + delay - now.getTime()) };
}
