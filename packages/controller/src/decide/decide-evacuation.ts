// What the controller does for a VMI an eviction marked (`status.evacuationNodeName`, written by
// podvirt-api's eviction webhook), as KubeVirt's evacuation controller does: while the VMI still
// runs on the marked node, exactly one migration moves it away; a migration that failed is
// followed by another after a backoff (kubectl drain keeps retrying its eviction meanwhile);
// once the VMI runs elsewhere the mark is cleared. `External` is left to whoever acts on it.

import { effectiveEvictionStrategy, EvictionStrategy, isFinalMigrationPhase, isFinalPhase, MigrationPhase, notLiveMigratableReason, type VirtualMachineInstance, type VirtualMachineInstanceMigration } from '@podvirt/api';

/** Marks the migrations the controller creates for an eviction; the value is the node left. */
export const EVACUATION_ANNOTATION = 'kubevirt.io/evacuationMigration';
/** The name prefix of those migrations (the API server adds a suffix). */
export const EVACUATION_NAME_PREFIX = 'kubevirt-evacuation-';

// After a failed evacuation migration the next waits 20 s, doubling per failure up to 5 minutes,
// so a target that cannot be had (every other node cordoned) is not hammered.
export const EVACUATION_BACKOFF_MS = 20_000;
export const EVACUATION_BACKOFF_MAX_MS = 300_000;

export type EvacuationDecision =
  | { readonly kind: 'none'; readonly why: string }
  /** The VMI left the node: clear `status.evacuationNodeName`. */
  | { readonly kind: 'clear' }
  | { readonly kind: 'create'; readonly nodeName: string }
  | { readonly kind: 'wait'; readonly afterMs: number; readonly why: string };

export interface EvacuationInput {
  readonly vmi: VirtualMachineInstance;
  /** Every migration of this VMI the cache holds. */
  readonly migrations: readonly VirtualMachineInstanceMigration[];
  readonly clusterDefault: EvictionStrategy;
  /** A migration created by an earlier sync is not in the cache yet. */
  readonly creationPending: boolean;
  readonly now: Date;
}

function failedAt(vmim: VirtualMachineInstanceMigration): number | undefined {
  if (vmim.status?.phase !== MigrationPhase.Failed) return undefined;
  const stamp = vmim.status.phaseTransitionTimestamps?.find((t) => t.phase === MigrationPhase.Failed)?.phaseTransitionTimestamp;
  return stamp === undefined ? undefined : Date.parse(stamp);
}

/** How long the next evacuation migration waits after the failed ones for `node`. */
function backoffLeft(migrations: readonly VirtualMachineInstanceMigration[], node: string, now: Date): number {
  const failures = migrations
    .filter((m) => m.metadata.annotations?.[EVACUATION_ANNOTATION] === node)
    .map(failedAt)
    .filter((t): t is number => t !== undefined && Number.isFinite(t));
  if (failures.length === 0) return 0;
  const delay = Math.min(EVACUATION_BACKOFF_MS * 2 ** (failures.length - 1), EVACUATION_BACKOFF_MAX_MS);
  return Math.max(0, Math.max(...failures) + delay - now.getTime());
}

export function decideEvacuation(input: EvacuationInput): EvacuationDecision {
  const { vmi } = input;
  const node = vmi.status?.evacuationNodeName ?? '';
  if (node === '') return { kind: 'none', why: 'not marked' };
  if (vmi.metadata.deletionTimestamp !== undefined || isFinalPhase(vmi.status?.phase)) return { kind: 'none', why: 'the VMI is ending' };
  if ((vmi.status?.nodeName ?? '') !== node) return { kind: 'clear' };
  if (effectiveEvictionStrategy(vmi, input.clusterDefault) === EvictionStrategy.External) return { kind: 'none', why: 'External: left to another actor' };
  if (input.creationPending) return { kind: 'none', why: 'a migration was just created' };
  if (input.migrations.some((m) => !isFinalMigrationPhase(m.status?.phase))) return { kind: 'none', why: 'a migration of the VMI is under way' };
  if (notLiveMigratableReason(vmi) !== undefined) return { kind: 'none', why: 'the VMI is not LiveMigratable' };
  const left = backoffLeft(input.migrations, node, input.now);
  if (left > 0) return { kind: 'wait', afterMs: left, why: 'the last evacuation migration failed' };
  return { kind: 'create', nodeName: node };
}
