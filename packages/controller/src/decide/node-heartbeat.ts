// Is a node's handler alive? Read from the heartbeat it stamps on its Node
// (`kubevirt.io/heartbeat`, RFC 3339, see the handler's heartbeat): a stamp older than the
// timeout means the handler (or the whole node) went away, as virt-controller's node controller
// judges it. A Node without a stamp never ran a handler and is not judged; neither is a Node the
// cache does not hold (podvirt leaves a deleted Node's VMIs to the pod-loss rules of decide-vmi).
// Pure: the node controller and the VMI decision read the same answer from the same cache.

import type { V1Node } from '@kubernetes/client-node';
import { HEARTBEAT_ANNOTATION, NODE_SCHEDULABLE_LABEL, VmiConditionReason } from '@podvirt/api';
import { timeOf } from './launcher-pod-state.js';

/** virt-controller's heartBeatTimeout: a handler silent this long is unresponsive. */
export const DEFAULT_NODE_HEARTBEAT_TIMEOUT_MS = 5 * 60_000;

/** `status.reason` of a VMI failed on an unresponsive node, the Ready condition's reason, and the Events' (KubeVirt's). */
export const NODE_UNRESPONSIVE_REASON = VmiConditionReason.NodeUnresponsive;

export type NodeHeartbeat =
  /** No stamp (no handler ever ran there), an unreadable one, or no Node: not judged. */
  | { readonly kind: 'unknown' }
  /** Fresh: stale in `staleInMs` unless the handler beats again. */
  | { readonly kind: 'responsive'; readonly staleInMs: number }
  | { readonly kind: 'unresponsive'; readonly lastBeatMs: number };

export function nodeHeartbeat(node: V1Node | undefined, now: Date, timeoutMs: number): NodeHeartbeat {
  const stamp = node?.metadata?.annotations?.[HEARTBEAT_ANNOTATION];
  const lastBeatMs = stamp === undefined ? undefined : timeOf(stamp);
  if (lastBeatMs === undefined) return { kind: 'unknown' };
  const staleInMs = lastBeatMs + timeoutMs - now.getTime();
  return staleInMs > 0 ? { kind: 'responsive', staleInMs } : { kind: 'unresponsive', lastBeatMs };
}

export function isNodeSchedulable(node: V1Node | undefined): boolean {
  return node?.metadata?.labels?.[NODE_SCHEDULABLE_LABEL] === 'true';
}

/** The answer the VMI decision asks for: is the handler of `nodeName` gone? */
export interface NodeHealth {
  isUnresponsive(nodeName: string, now: Date): boolean;
}
