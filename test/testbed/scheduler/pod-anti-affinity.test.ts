import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { pickNode } from './pick-node.js';
import { antiAffinityForbids, selectorMatches } from './pod-anti-affinity.js';

function node(name: string): V1Node {
  return { metadata: { name, labels: { 'kubernetes.io/hostname': name } }, status: { conditions: [{ type: 'Ready', status: 'True' }] } };
}

function launcher(name: string, nodeName: string | undefined, phase = 'Running', namespace = 'default'): V1Pod {
  return {
    metadata: { name, namespace, uid: `${name}-uid`, labels: { 'kubevirt.io/created-by': 'vmi-1' } },
    spec: { containers: [], ...(nodeName === undefined ? {} : { nodeName }) },
    status: { phase },
  };
}

function target(): V1Pod {
  const pod = launcher('target', undefined, 'Pending');
  pod.spec = {
    ...pod.spec,
    containers: [],
    affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels: { 'kubevirt.io/created-by': 'vmi-1' } }, topologyKey: 'kubernetes.io/hostname' }] } },
  };
  return pod;
}

const nodes = [node('node-a'), node('node-b')];

test('a required anti-affinity keeps the pod off the node of a matching running pod, and names the rule when no node is left', () => {
  const pods = [launcher('source', 'node-a')];
  const place = (all: V1Pod[], among = nodes) => pickNode(target(), among, new Map(), () => [], (n) => antiAffinityForbids(target(), n, among, all));
  assert.deepEqual(place(pods), { node: 'node-b' });
  assert.deepEqual(place(pods, [node('node-a')]), { reason: '0/1 nodes are available: 1 node(s) didn\'t match pod anti-affinity rules.' });
  assert.deepEqual(place([launcher('source', 'node-a'), launcher('other-b', 'node-b')]), { reason: '0/2 nodes are available: 2 node(s) didn\'t match pod anti-affinity rules.' });
});

test('finished and other-namespace pods do not repel; unmatched labels do not either', () => {
  assert.equal(antiAffinityForbids(target(), node('node-a'), nodes, [launcher('old', 'node-a', 'Succeeded')]), false);
  assert.equal(antiAffinityForbids(target(), node('node-a'), nodes, [launcher('old', 'node-a', 'Failed')]), false);
  assert.equal(antiAffinityForbids(target(), node('node-a'), nodes, [launcher('elsewhere', 'node-a', 'Running', 'prod')]), false);
  const stranger = launcher('x', 'node-a');
  stranger.metadata = { ...stranger.metadata, labels: { 'kubevirt.io/created-by': 'vmi-2' } };
  assert.equal(antiAffinityForbids(target(), node('node-a'), nodes, [stranger]), false);
  assert.equal(antiAffinityForbids(launcher('plain', undefined), node('node-a'), nodes, [launcher('source', 'node-a')]), false);
});

test('label selectors: matchLabels and the four expression operators; a missing selector matches nothing', () => {
  const labels = { app: 'vm', tier: 'db' };
  assert.equal(selectorMatches({ matchLabels: { app: 'vm' } }, labels), true);
  assert.equal(selectorMatches({ matchExpressions: [{ key: 'tier', operator: 'In', values: ['db'] }] }, labels), true);
  assert.equal(selectorMatches({ matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['db'] }] }, labels), false);
  assert.equal(selectorMatches({ matchExpressions: [{ key: 'zone', operator: 'DoesNotExist' }] }, labels), true);
  assert.equal(selectorMatches({ matchExpressions: [{ key: 'zone', operator: 'Exists' }] }, labels), false);
  assert.equal(selectorMatches(undefined, labels), false);
  assert.equal(selectorMatches({}, labels), true);
});
