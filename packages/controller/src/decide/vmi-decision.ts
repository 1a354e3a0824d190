// What decideVmi returns: the desired status plus the actions that get the cluster there.

import type { EventType, VmiStatus } from '@podvirt/api';

/** `status.reason` of a VMI the controller fails, also the reason of its Warning Event. */
export const FailureReason = {
  /** The launcher pod vanished while the VMI depended on it. */
  PodNotExists: 'PodNotExists',
  /** The launcher pod (or its compute container) terminated. */
  PodFailed: 'PodFailed',
  /** The launcher pod is being deleted before the VM ever ran. */
  PodTerminating: 'PodTerminating',
  /** The launcher is gone while the node's handler is silent (KubeVirt's node controller's reason). */
  NodeUnresponsive: 'NodeUnresponsive',
} as const;

export type FailureReason = (typeof FailureReason)[keyof typeof FailureReason];

export interface DecisionEvent {
  readonly type: EventType;
  readonly reason: string;
  readonly message: string;
}

export interface VmiDecision {
  /** The status the VMI should have. */
  readonly status: VmiStatus;
  /** Whether `status` differs from the VMI's; only then is it written. */
  readonly statusChanged: boolean;
  /** Node to record in the VMI's `kubevirt.io/nodeName` label, when it is not there yet. */
  readonly nodeNameLabel: string | undefined;
  readonly addFinalizer: boolean;
  /** Remove the finalizer: the VMI is being deleted and no launcher runs any more. */
  readonly removeFinalizer: boolean;
  readonly createPod: boolean;
  /** Names of the launcher pods to delete. */
  readonly deletePods: readonly string[];
  readonly events: readonly DecisionEvent[];
  /** Look again after this long even if nothing changes (a grace window is running). */
  readonly requeueAfterMs: number | undefined;
}
