// The VMI's Ready condition. As in KubeVirt (syncReadyConditionFromPod), the controller owns it
// in every phase and the handler never writes it: False while there is no pod, while the pod
// is terminating, or while the guest is not Running; once Running, a copy of the launcher
// pod's own Ready condition. podvirt's pod has no readiness gate, so a paused VM stays Ready.
// On a node whose handler went silent (node-heartbeat.ts): False, NodeUnresponsive.

import type { V1Pod } from '@kubernetes/client-node';
import { ConditionStatus, isFinalPhase, kubeTime, upsertCondition, VmiConditionReason, VmiConditionType, VmiPhase, type VmiCondition } from '@podvirt/api';
import { isTerminating, podCondition } from './launcher-pod-state.js';

type ReadyFacts = Pick<VmiCondition, 'status' | 'reason' | 'message'>;

function readyFacts(phase: string, pod: V1Pod | undefined, silentNode: string | undefined): ReadyFacts {
  if (!pod) return { status: ConditionStatus.False, reason: VmiConditionReason.PodNotExists, message: 'virt-launcher pod has not yet been scheduled' };
  if (isTerminating(pod)) return { status: ConditionStatus.False, reason: VmiConditionReason.PodTerminating, message: 'virt-launcher pod is terminating' };
  // Nobody can vouch for the guest while its node's handler is silent, whatever the pod says.
  if (silentNode !== undefined && !isFinalPhase(phase)) return { status: ConditionStatus.False, reason: VmiConditionReason.NodeUnresponsive, message: `the handler of node ${silentNode} is not responsive` };
  if (phase !== VmiPhase.Running) return { status: ConditionStatus.False, reason: VmiConditionReason.GuestNotRunning, message: 'Guest VM is not reported as running' };
  const ready = podCondition(pod, 'Ready');
  if (!ready) return { status: ConditionStatus.False, reason: VmiConditionReason.PodConditionMissing, message: 'virt-launcher pod is missing the Ready condition' };
  const status = ready.status === 'True' ? ConditionStatus.True : ready.status === 'False' ? ConditionStatus.False : ConditionStatus.Unknown;
  return { status, ...(ready.reason ? { reason: ready.reason } : {}), ...(ready.message ? { message: ready.message } : {}) };
}

/**
 * The conditions with Ready recomputed, by the one condition rule of upsertCondition.
 * `silentNode`: the VMI's node, when its handler stopped beating.
 */
export function withReadyCondition(conditions: readonly VmiCondition[] | undefined, phase: string, pod: V1Pod | undefined, now: Date, silentNode?: string): VmiCondition[] {
  return upsertCondition(conditions, { type: VmiConditionType.Ready, ...readyFacts(phase, pod, silentNode) }, kubeTime(now));
}
