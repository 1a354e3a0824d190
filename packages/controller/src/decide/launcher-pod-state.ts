// Reading a launcher pod's state. Pods reach the controller both from typed list calls (dates
// as Date) and from raw watch events (dates as RFC 3339 strings), so times are read from either.

import type { V1Pod, V1PodCondition } from '@kubernetes/client-node';
import { COMPUTE_CONTAINER_NAME } from '../launcher-layout.js';

export function timeOf(value: unknown): number | undefined {
  if (value instanceof Date) return value.getTime();
  if (typeof value === 'string') {
    const ms = Date.parse(value);
    return Number.isNaN(ms) ? undefined : ms;
  }
  return undefined;
}

export function isTerminating(pod: V1Pod): boolean {
  return pod.metadata?.deletionTimestamp != null;
}

/** Succeeded or Failed: with restartPolicy Never the pod can never run again. */
export function isFinishedPod(pod: V1Pod): boolean {
  return pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
}

function computeStatus(pod: V1Pod) {
  return pod.status?.containerStatuses?.find((c) => c.name === COMPUTE_CONTAINER_NAME);
}

/** The launcher no longer runs: the pod finished, or its compute container terminated. */
export function isPodDown(pod: V1Pod): boolean {
  return isFinishedPod(pod) || computeStatus(pod)?.state?.terminated != null;
}

/** How the compute container ended, as the kubelet reports it: " (compute: OOMKilled, exit code 137)". */
export function computeTermination(pod: V1Pod): string {
  const t = computeStatus(pod)?.state?.terminated;
  if (t == null) return '';
  return ` (compute: ${t.reason ?? 'terminated'}, exit code ${t.exitCode})`;
}

/** Since when the launcher is down, when the pod says; undefined when it does not. */
export function podDownSince(pod: V1Pod): number | undefined {
  const finished = timeOf(computeStatus(pod)?.state?.terminated?.finishedAt);
  if (finished !== undefined) return finished;
  return timeOf(podCondition(pod, 'Ready')?.lastTransitionTime);
}

export function podCondition(pod: V1Pod, type: string): V1PodCondition | undefined {
  return pod.status?.conditions?.find((c) => c.type === type);
}

export function isPodReady(pod: V1Pod): boolean {
  return pod.status?.phase === 'Running' && podCondition(pod, 'Ready')?.status === 'True';
}

export function podNodeName(pod: V1Pod): string | undefined {
  const node = pod.spec?.nodeName;
  return node ? node : undefined;
}

export function computeImage(pod: V1Pod): string | undefined {
  return pod.spec?.containers.find((c) => c.name === COMPUTE_CONTAINER_NAME)?.image;
}

/** Newest first, live pods before terminating ones: the pod a VMI's phase follows. */
export function currentPod(pods: readonly V1Pod[]): V1Pod | undefined {
  const sorted = [...pods].sort((a, b) => {
    const dying = Number(isTerminating(a)) - Number(isTerminating(b));
    if (dying !== 0) return dying;
    return (timeOf(b.metadata?.creationTimestamp) ?? 0) - (timeOf(a.metadata?.creationTimestamp) ?? 0);
  });
  return sorted[0];
}
