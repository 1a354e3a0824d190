// The one way a status condition is set or dropped, for VMIs and migrations alike.
//
// Order: a condition keeps its place in the list and a new one is appended. KubeVirt's readers
// (virtctl, kubectl wait --for=condition=…, dashboards) look conditions up by type, so the order
// means nothing to them; but the list is compared whole to decide whether a status write is
// needed, and moving a condition to the end would turn an unchanged condition into a write
// (and the watch event it wakes) each time another writer appended one after it.
//
// Time: lastTransitionTime moves only when the status flips (metav1.Condition's rule); a
// condition whose status, reason and message are unchanged is kept as it was, object and all.

import type { ConditionStatus } from './conditions.js';
import type { VmiCondition } from './types/condition.js';

export interface ConditionUpdate {
  readonly type: string;
  readonly status: ConditionStatus;
  /** Omitted from the condition when undefined or empty, as the API server would drop it. */
  readonly reason?: string | undefined;
  readonly message?: string | undefined;
  /** When the status flipped, if the caller knows better than `now` (a copied pod condition). */
  readonly lastTransitionTime?: string | undefined;
}

/** The conditions with `update` in its place (appended when new); `now` is a kubeTime. */
export function upsertCondition(conditions: readonly VmiCondition[] | undefined, update: ConditionUpdate, now: string): VmiCondition[] {
  const all = conditions ?? [];
  const at = all.findIndex((c) => c.type === update.type);
  const previous = all[at];
  if (previous !== undefined && same(previous, update)) return [...all];
  const next: VmiCondition = {
    type: update.type,
    status: update.status,
    lastProbeTime: null,
    lastTransitionTime: previous?.status === update.status && previous.lastTransitionTime ? previous.lastTransitionTime : (update.lastTransitionTime ?? now),
    ...(update.reason ? { reason: update.reason } : {}),
    ...(update.message ? { message: update.message } : {}),
  };
  return at < 0 ? [...all, next] : all.map((c, i) => (i === at ? next : c));
}

/** The conditions without any of `type`. */
export function removeCondition(conditions: readonly VmiCondition[] | undefined, type: string): VmiCondition[] {
  return (conditions ?? []).filter((c) => c.type !== type);
}

function same(c: VmiCondition, update: ConditionUpdate): boolean {
  return c.status === update.status && (c.reason ?? '') === (update.reason ?? '') && (c.message ?? '') === (update.message ?? '');
}
