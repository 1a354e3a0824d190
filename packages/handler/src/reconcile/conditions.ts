// Condition bookkeeping as Kubernetes expects it: lastTransitionTime moves only when the status
// flips, so an unchanged condition never makes a status write.

import type { ConditionStatus, VmiCondition } from '@podvirt/api';

export interface ConditionUpdate {
  readonly type: string;
  readonly status: ConditionStatus;
  readonly reason?: string;
  readonly message?: string;
}

export function setCondition(conditions: readonly VmiCondition[], update: ConditionUpdate, nowIso: string): VmiCondition[] {
  const old = conditions.find((c) => c.type === update.type);
  const next: VmiCondition = {
    type: update.type,
    status: update.status,
    lastProbeTime: null,
    lastTransitionTime: old !== undefined && old.status === update.status ? (old.lastTransitionTime ?? nowIso) : nowIso,
    ...(update.reason === undefined ? {} : { reason: update.reason }),
    ...(update.message === undefined ? {} : { message: update.message }),
  };
  if (old === undefined) return [...conditions, next];
  return conditions.map((c) => (c === old ? next : c));
}

export function removeCondition(conditions: readonly VmiCondition[], type: string): VmiCondition[] {
  return conditions.filter((c) => c.type !== type);
}

/** Kubernetes timestamps have whole seconds (metav1.Time). */
export function toKubeTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}
