// The nodes of one testbed: the first keeps the name and kubelet dir a single-node testbed has,
// so every suite written for one node runs unchanged; the others are `<name>-2`, `<name>-3` …
// with kubelet dirs of their own. All of them share the first node's pod network (bridge and
// host-local range), so a pod reaches the pods of every node as on a flat cluster network.
import { join } from 'node:path';

export interface TestbedNode {
  readonly nodeName: string;
  readonly kubeletRoot: string;
}

export const MAX_TESTBED_NODES = 4;

export function testbedNodes(stateDir: string, firstName: string, count: number): TestbedNode[] {
  if (!Number.isInteger(count) || count < 1 || count > MAX_TESTBED_NODES) {
    throw new RangeError(`a testbed has 1 to ${MAX_TESTBED_NODES} nodes, not ${count}`);
  }
  return Array.from({ length: count }, (_, i) => ({
    nodeName: i === 0 ? firstName : `${firstName}-${i + 1}`,
    kubeletRoot: join(stateDir, i === 0 ? 'kubelet' : `kubelet-${i + 1}`),
  }));
}
