// Which of a VMI's launcher pods is its own, now that a migration adds a second one: the VMI
// follows the pod on its `status.nodeName` (the target pod of a migration runs on another node,
// the scheduler's anti-affinity sees to it); before the VMI has a node, the pod that is no
// migration's target. After the hand-over `status.nodeName` names the target's node, so the
// target pod becomes the VMI's own without being relabelled.

import type { V1Pod } from '@kubernetes/client-node';
import { MIGRATION_JOB_LABEL, type VirtualMachineInstance } from '@podvirt/api';
import { currentPod, podNodeName } from './launcher-pod-state.js';

export function isMigrationTargetPod(pod: V1Pod, migrationUid?: string): boolean {
  const label = pod.metadata?.labels?.[MIGRATION_JOB_LABEL];
  return label !== undefined && (migrationUid === undefined || label === migrationUid);
}

/** The pod the VMI's phase follows: on its node once it has one, else the newest non-target pod. */
export function vmiPod(vmi: VirtualMachineInstance, pods: readonly V1Pod[]): V1Pod | undefined {
  const node = vmi.status?.nodeName;
  if (node) return currentPod(pods.filter((pod) => podNodeName(pod) === node));
  return currentPod(pods.filter((pod) => !isMigrationTargetPod(pod)));
}
