import type { V1Node, V1Pod } from '@kubernetes/client-node';

export type Placement = { node: string } | { reason: string };

/**
 * Where a pending pod goes: the ready, schedulable node whose labels satisfy the pod's
 * nodeSelector and that holds the fewest pods; otherwise why none fits, worded like the
 * default scheduler's FailedScheduling message.
 */
export function pickNode(
  pod: V1Pod,
  nodes: readonly V1Node[],
  podsPerNode: ReadonlyMap<string, number>,
  insufficient: (node: V1Node) => string[] = () => [],
  antiAffinity: (node: V1Node) => boolean = () => false,
): Placement {
  const selector = pod.spec?.nodeSelector ?? {};
  let notReady = 0;
  let unschedulable = 0;
  let mismatched = 0;
  let repelled = 0;
  const short = new Map<string, number>();
  const fits: string[] = [];
  for (const node of nodes) {
    const name = node.metadata?.name;
    if (name === undefined) continue;
    const ready = node.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
    if (!ready) notReady += 1;
    else if (node.spec?.unschedulable === true) unschedulable += 1;
    else if (!Object.entries(selector).every(([k, v]) => node.metadata?.labels?.[k] === v)) mismatched += 1;
    else if (antiAffinity(node)) repelled += 1;
    else {
      const missing = insufficient(node);
      for (const r of missing) short.set(r, (short.get(r) ?? 0) + 1);
      if (missing.length === 0) fits.push(name);
    }
  }
  fits.sort((a, b) => (podsPerNode.get(a) ?? 0) - (podsPerNode.get(b) ?? 0) || (a < b ? -1 : 1));
  const chosen = fits[0];
  if (chosen !== undefined) return { node: chosen };
  const reasons: string[] = [];
  if (notReady > 0) reasons.push(`${notReady} node(s) had untolerated taint {node.kubernetes.io/not-ready: }`);
  if (unschedulable > 0) reasons.push(`${unschedulable} node(s) were unschedulable`);
  if (mismatched > 0) reasons.push(`${mismatched} node(s) didn't match Pod's node affinity/selector`);
  if (repelled > 0) reasons.push(`${repelled} node(s) didn't match pod anti-affinity rules`);
  for (const [resource, n] of [...short].sort()) reasons.push(`${n} Insufficient ${resource}`);
  const detail = reasons.length === 0 ? 'no nodes available to schedule pods' : `${reasons.join(', ')}.`;
  return { reason: `0/${nodes.length} nodes are available: ${detail}` };
}
