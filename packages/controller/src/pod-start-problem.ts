// Why a launcher pod that exists has not started, as the VMI should say it (KubeVirt's
// virt-controller, watch/vmi/lifecycle.go, for a VMI in Scheduling): the pod's PodScheduled=False
// condition is copied onto the VMI, and an image its containers cannot pull becomes the reason
// of Synchronized=False (ErrImagePull, ImagePullBackOff) with the kubelet's message.

import type { V1Pod, V1PodCondition } from '@kubernetes/client-node';

export interface PodStartProblem {
  readonly reason: string;
  readonly message: string;
}

const IMAGE_REASONS = new Set(['ErrImagePull', 'ImagePullBackOff']);

/** The first container (init containers first) waiting because its image cannot be pulled. */
export function imagePullProblem(pod: V1Pod): PodStartProblem | undefined {
  const statuses = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])];
  for (const s of statuses) {
    const waiting = s.state?.waiting;
    if (waiting?.reason !== undefined && IMAGE_REASONS.has(waiting.reason)) {
      return { reason: waiting.reason, message: waiting.message ?? `container ${s.name}: ${waiting.reason}` };
    }
  }
  return undefined;
}

/** The pod's PodScheduled condition when it is False (no node can take the pod). */
export function unschedulable(pod: V1Pod): V1PodCondition | undefined {
  return pod.status?.conditions?.find((c) => c.type === 'PodScheduled' && c.status === 'False');
}
