// What the controller does for a VMI an eviction marked (`status.evacuationNodeName`, written by
// podvirt-api's eviction webhook), as KubeVirt's evacuation controller does: while the VMI still
// runs on the marked node, exactly one migration moves it away; a migration that failed is
// followed by another after a backoff (kubectl drain keeps retrying its eviction meanwhile);
// once the VMI runs elsewhere the mark is cleared. `External` is left to whoever acts on it.

import { effectiveEvictionStrategy, evacuationBackoff, EvictionStrategy, isFinalMigrationPhase, isFinalPhase, notLiveMigratableReason, type VirtualMachineInstance, type VirtualMachineInstanceMigration } from '@podvirt/api';

// The annotation, the name prefix and the backoff live in @podvirt/api: the eviction webhook tells
// `kubectl drain` when the next try is due from the same numbers.
export { EVACUATION_ANNOTATION, EVACUATION_BACKOFF_MAX_MS, EVACUATION_BACKOFF_MS, EVACUATION_NAME_PREFIX } from '@podvirt/api';

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
  const left = evacuationBackoff(input.migrations, node, input.now).leftMs;
  if (left > 0) return { kind: 'wait', afterMs: left, why: 'the last evacuation migration failed' };
  return { kind: 'create', nodeName: node };
}
