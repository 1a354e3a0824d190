import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { extendedUsage, insufficientResources, podExtendedResources } from './resource-fit.js';
import { pickNode } from './pick-node.js';

const KVM = 'devices.kubevirt.io/kvm';
const TUN = 'devices.kubevirt.io/tun';

function node(name: string, allocatable: Record<string, string>): V1Node {
  return { metadata: { name }, status: { allocatable, conditions: [{ type: 'Ready', status: 'True' }] } };
}

function pod(resources: Record<string, string>, extra: Partial<V1Pod['spec']> = {}, phase?: string): V1Pod {
  return {
    metadata: { name: 'p', namespace: 'default' },
    spec: { containers: [{ name: 'c', resources: { requests: { cpu: '1', memory: '1Gi', ...resources }, limits: resources } }], ...extra },
    ...(phase === undefined ? {} : { status: { phase } }),
  };
}

test('extended resources of a pod: containers summed, an init container counted by its maximum, cpu/memory left out', () => {
  const p = pod({ [KVM]: '1' });
  p.spec?.containers.push({ name: 'd', resources: { limits: { [KVM]: '2', [TUN]: '1' } } });
  p.spec!.initContainers = [{ name: 'i', resources: { limits: { [TUN]: '3' } } }];
  assert.deepEqual(Object.fromEntries(podExtendedResources(p)), { [KVM]: 3, [TUN]: 3 });
});

test('usage counts non-terminated bound pods only; a node fits while allocatable minus usage covers the request', () => {
  const usage = extendedUsage([
    pod({ [KVM]: '1' }, { nodeName: 'n1' }),
    pod({ [KVM]: '1' }, { nodeName: 'n1' }, 'Succeeded'),
    pod({ [KVM]: '1' }),
  ]);
  assert.deepEqual(Object.fromEntries(usage.get('n1') ?? []), { [KVM]: 1 });
  const n1 = node('n1', { [KVM]: '2' });
  assert.deepEqual(insufficientResources(new Map([[KVM, 1]]), n1, usage.get('n1')), []);
  assert.deepEqual(insufficientResources(new Map([[KVM, 2]]), n1, usage.get('n1')), [KVM]);
  assert.deepEqual(insufficientResources(new Map([[TUN, 1]]), n1, undefined), [TUN], 'a node without the resource has none');
});

test('pickNode: no node with enough of a resource → the default scheduler\'s message naming it', () => {
  const nodes = [node('n1', { [KVM]: '1000' }), node('n2', {})];
  const wanted = new Map([[KVM, 1001]]);
  const placement = pickNode(pod({}), nodes, new Map(), (n) => insufficientResources(wanted, n, undefined));
  assert.deepEqual(placement, { reason: `0/2 nodes are available: 2 Insufficient ${KVM}.` });
  const fits = pickNode(pod({}), nodes, new Map(), (n) => insufficientResources(new Map([[KVM, 1]]), n, undefined));
  assert.deepEqual(fits, { node: 'n1' });
});
