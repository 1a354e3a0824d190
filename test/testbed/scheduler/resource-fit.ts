// Extended resources (device plugin resources such as devices.kubevirt.io/kvm) in scheduling, as
// the default scheduler's NodeResourcesFit counts them: a pod fits a node when, for every extended
// resource it asks for, the node's allocatable minus what its non-terminated pods already asked
// for covers the pod's request. CPU and memory are not counted on the testbed.

import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { extendedResources } from '../kubelet/container-devices.js';

/** The pod's extended resources: its containers' sum, or an init container's if larger. */
export function podExtendedResources(pod: V1Pod): Map<string, number> {
  const total = new Map<string, number>();
  for (const c of pod.spec?.containers ?? []) {
    for (const [name, n] of extendedResources(c)) total.set(name, (total.get(name) ?? 0) + n);
  }
  for (const c of pod.spec?.initContainers ?? []) {
    for (const [name, n] of extendedResources(c)) total.set(name, Math.max(total.get(name) ?? 0, n));
  }
  return total;
}

/** Node name → resource → what its non-terminated pods requested. */
export function extendedUsage(pods: readonly V1Pod[]): Map<string, Map<string, number>> {
  const usage = new Map<string, Map<string, number>>();
  for (const pod of pods) {
    const node = pod.spec?.nodeName;
    if (node === undefined || node === '' || pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed') continue;
    addUsage(usage, node, podExtendedResources(pod));
  }
  return usage;
}

export function addUsage(usage: Map<string, Map<string, number>>, node: string, wanted: ReadonlyMap<string, number>): void {
  const mine = usage.get(node) ?? new Map<string, number>();
  for (const [name, n] of wanted) mine.set(name, (mine.get(name) ?? 0) + n);
  usage.set(node, mine);
}

/** The extended resources the node cannot give the pod (empty: it fits). */
export function insufficientResources(wanted: ReadonlyMap<string, number>, node: V1Node, used: ReadonlyMap<string, number> | undefined): string[] {
  const short: string[] = [];
  for (const [name, n] of wanted) {
    const allocatable = Number(node.status?.allocatable?.[name] ?? '0');
    if (allocatable - (used?.get(name) ?? 0) < n) short.push(name);
  }
  return short;
}
