// The one inter-pod rule the testbed scheduler knows: a required pod anti-affinity
// (`requiredDuringSchedulingIgnoredDuringExecution`) keeps a pod off every node whose
// topology value (the node label named by `topologyKey`, e.g. kubernetes.io/hostname) is that
// of a node running a pod the term's label selector matches. As the real scheduler, only
// pods in the term's namespaces (the pod's own by default) count, and pods that finished
// (Succeeded, Failed) or are being deleted do not. podvirt's migration target pod relies on it
// to land on another node than the VMI's.

import type { V1LabelSelector, V1Node, V1Pod, V1PodAffinityTerm } from '@kubernetes/client-node';

export function requiredAntiAffinity(pod: V1Pod): V1PodAffinityTerm[] {
  return pod.spec?.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? [];
}

export function selectorMatches(selector: V1LabelSelector | undefined, labels: Readonly<Record<string, string>>): boolean {
  // A nil selector matches nothing, an empty one everything (metav1.LabelSelectorAsSelector).
  if (selector === undefined) return false;
  const byLabel = Object.entries(selector.matchLabels ?? {}).every(([k, v]) => labels[k] === v);
  const byExpression = (selector.matchExpressions ?? []).every((e) => {
    const value = labels[e.key];
    switch (e.operator) {
      case 'In':
        return value !== undefined && (e.values ?? []).includes(value);
      case 'NotIn':
        return value === undefined || !(e.values ?? []).includes(value);
      case 'Exists':
        return value !== undefined;
      case 'DoesNotExist':
        return value === undefined;
      default:
        return false;
    }
  });
  return byLabel && byExpression;
}

function counts(other: V1Pod): boolean {
  const phase = other.status?.phase;
  return other.spec?.nodeName !== undefined && other.spec.nodeName !== '' && other.metadata?.deletionTimestamp == null && phase !== 'Succeeded' && phase !== 'Failed';
}

/** Whether `pod`'s required anti-affinity keeps it off `node`, given every pod of the cluster. */
export function antiAffinityForbids(pod: V1Pod, node: V1Node, nodes: readonly V1Node[], pods: readonly V1Pod[]): boolean {
  const terms = requiredAntiAffinity(pod);
  if (terms.length === 0) return false;
  const nodeLabels = new Map(nodes.map((n) => [n.metadata?.name ?? '', n.metadata?.labels ?? {}]));
  return terms.some((term) => {
    const value = node.metadata?.labels?.[term.topologyKey];
    // A node without the topology label is in no domain the term can exclude.
    if (value === undefined) return false;
    const namespaces = term.namespaces !== undefined && term.namespaces.length > 0 ? term.namespaces : [pod.metadata?.namespace ?? 'default'];
    return pods.some((other) =>
      other.metadata?.uid !== pod.metadata?.uid &&
      counts(other) &&
      namespaces.includes(other.metadata?.namespace ?? '') &&
      nodeLabels.get(other.spec?.nodeName ?? '')?.[term.topologyKey] === value &&
      selectorMatches(term.labelSelector, other.metadata?.labels ?? {}));
  });
}
