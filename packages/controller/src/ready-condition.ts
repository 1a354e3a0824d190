// The VMI's Ready condition. As in KubeVirt (syncReadyConditionFromPod), the controller owns it
// in every phase and the handler never writes it: False while there is no pod, while the pod
// is terminating, or while the guest is not Running; once Running, a copy of the launcher
// pod's own Ready condition. podvirt's pod has no readiness gate, so a paused VM stays Ready.

import type { V1Pod } from '@kubernetes/client-node';
import { ConditionStatus, VmiConditionReason, VmiConditionType, VmiPhase, type VmiCondition } from '@podvirt/api';
import { isTerminating, podCondition } from './launcher-pod-state.js';
import { rfc3339 } from './rfc3339.js';

type ReadyFacts = Pick<VmiCondition, 'status' | 'reason' | 'message'>;

function readyFacts(phase: string, pod: V1Pod | undefined): ReadyFacts {
  if (!pod) return { status: ConditionStatus.False, reason: VmiConditionReason.PodNotExists, message: 'virt-launcher pod has not yet been scheduled' };
  if (isTerminating(pod)) return { status: ConditionStatus.False, reason: VmiConditionReason.PodTerminating, message: 'virt-launcher pod is terminating' };
  if (phase !== VmiPhase.Running) return { status: ConditionStatus.False, reason: VmiConditionReason.GuestNotRunning, message: 'Guest VM is not reported as running' };
  const ready = podCondition(pod, 'Ready');
  if (!ready) return { status: ConditionStatus.False, reason: VmiConditionReason.PodConditionMissing, message: 'virt-launcher pod is missing the Ready condition' };
  const status = ready.status === 'True' ? ConditionStatus.True : ready.status === 'False' ? ConditionStatus.False : ConditionStatus.Unknown;
  return { status, ...(ready.reason ? { reason: ready.reason } : {}), ...(ready.message ? { message: ready.message } : {}) };
}

/**
 * The conditions with Ready recomputed, in Ready's place (appended when new). An unchanged Ready
 * keeps its transition time and its place, so that a status write happens only when something
 * really changed: moved to the end, it made a write each time the handler appended a condition
 * after it (Paused, on every pause).
 */
export function withReadyCondition(conditions: readonly VmiCondition[] | undefined, phase: string, pod: V1Pod | undefined, now: Date): VmiCondition[] {
  const all = conditions ?? [];
  const at = all.findIndex((c) => c.type === VmiConditionType.Ready);
  const previous = all[at];
  const others = all.filter((c) => c.type !== VmiConditionType.Ready);
  const ready = readyCondition(previous, readyFacts(phase, pod), now);
  // `at` is the first Ready, so as many conditions come before it in `others`.
  return at < 0 ? [...others, ready] : [...others.slice(0, at), ready, ...others.slice(at)];
}

function readyCondition(previous: VmiCondition | undefined, facts: ReadyFacts, now: Date): VmiCondition {
  const same =
    previous !== undefined && previous.status === facts.status && previous.reason === facts.reason && previous.message === facts.message;
  if (same) return previous;
  return {
    type: VmiConditionType.Ready,
    status: facts.status,
    lastProbeTime: null,
    lastTransitionTime: previous?.status === facts.status && previous.lastTransitionTime ? previous.lastTransitionTime : rfc3339(now),
    ...(facts.reason ? { reason: facts.reason } : {}),
    ...(facts.message ? { message: facts.message } : {}),
  };
}
