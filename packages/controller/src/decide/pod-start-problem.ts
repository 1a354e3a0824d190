// Why a launcher pod that exists has not started, as the VMI should say it (KubeVirt's
// virt-controller, watch/vmi/lifecycle.go, for a VMI in Scheduling): the pod's PodScheduled=False
// condition is copied onto the VMI, and an image its containers cannot pull becomes the reason
// of Synchronized=False (ErrImagePull, ImagePullBackOff) with the kubelet's message. podvirt
// adds a volume the kubelet cannot mount (FailedMount: a missing cloud-init Secret, a hostDisk
// directory that is not there), which the kubelet reports only as an Event on the pod.

import type { CoreV1Event, V1Pod, V1PodCondition } from '@kubernetes/client-node';

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

/** The kubelet's Event reason for a volume it cannot set up. */
export const FAILED_MOUNT_REASON = 'FailedMount';

function eventTime(e: CoreV1Event): number {
  const t = e.lastTimestamp ?? e.eventTime ?? e.metadata.creationTimestamp;
  return t === undefined ? 0 : new Date(t as unknown as string).getTime();
}

/** The newest FailedMount Event among `events` about the pod with this UID, while it has not started. */
export function mountProblem(pod: V1Pod, events: readonly CoreV1Event[]): PodStartProblem | undefined {
  if (pod.status?.phase !== undefined && pod.status.phase !== 'Pending') return undefined;
  const uid = pod.metadata?.uid;
  const mine = events.filter((e) => e.reason === FAILED_MOUNT_REASON && e.involvedObject.uid === uid);
  const newest = mine.reduce<CoreV1Event | undefined>((a, e) => (a === undefined || eventTime(e) >= eventTime(a) ? e : a), undefined);
  return newest === undefined ? undefined : { reason: FAILED_MOUNT_REASON, message: `virt-launcher pod ${pod.metadata?.name ?? ''}: ${newest.message ?? FAILED_MOUNT_REASON}` };
}
