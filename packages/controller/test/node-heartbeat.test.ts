import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, mock, test } from 'node:test';
import type { V1Node } from '@kubernetes/client-node';
import pino from 'pino';
import { HEARTBEAT_ANNOTATION, NODE_SCHEDULABLE_LABEL, kubeTime } from '@podvirt/api';
import { decideVmi } from '../src/decide/decide-vmi.js';
import { DEFAULT_NODE_HEARTBEAT_TIMEOUT_MS, nodeHeartbeat } from '../src/decide/node-heartbeat.js';
import type { NodeClient } from '../src/kube/cluster-roles.js';
import { NodeController } from '../src/reconcile/node-controller.js';
import { launcherPod, vmiFixture } from './fixtures.js';

const T0 = Date.parse('2025-01-01T00:00:00Z');
const TIMEOUT = DEFAULT_NODE_HEARTBEAT_TIMEOUT_MS;

function node(name: string, beatAt: number | string | undefined, schedulable = true): V1Node {
  const annotations = beatAt === undefined ? {} : { [HEARTBEAT_ANNOTATION]: typeof beatAt === 'string' ? beatAt : kubeTime(beatAt) };
  return { metadata: { name, uid: `${name}-uid`, labels: { [NODE_SCHEDULABLE_LABEL]: String(schedulable) }, annotations } };
}

describe('nodeHeartbeat', () => {
  const at = new Date(T0 + 60_000);
  test('a fresh stamp is responsive until it is `timeout` old', () => {
    assert.deepEqual(nodeHeartbeat(node('n', T0), at, TIMEOUT), { kind: 'responsive', staleInMs: TIMEOUT - 60_000 });
    assert.deepEqual(nodeHeartbeat(node('n', T0), new Date(T0 + TIMEOUT), TIMEOUT), { kind: 'unresponsive', lastBeatMs: T0 });
  });
  test('no stamp, an unreadable one, or no Node: not judged', () => {
    assert.equal(nodeHeartbeat(node('n', undefined), at, TIMEOUT).kind, 'unknown');
    assert.equal(nodeHeartbeat(node('n', 'yesterday'), at, TIMEOUT).kind, 'unknown');
    assert.equal(nodeHeartbeat(undefined, at, TIMEOUT).kind, 'unknown');
  });
});

describe('decideVmi on a node whose handler is silent', () => {
  const now = new Date('2025-01-01T00:05:00Z');
  const running = { phase: 'Running' as const, nodeName: 'node01' };
  const ready = (d: ReturnType<typeof decideVmi>) => d.status.conditions?.find((c) => c.type === 'Ready');

  test('a launcher that still runs: Running, Ready=False NodeUnresponsive, nothing deleted, no Event', () => {
    const d = decideVmi({ vmi: vmiFixture({ status: running }), pods: [launcherPod({ node: 'node01', phase: 'Running', ready: true })], now, nodeUnresponsive: true });
    assert.equal(d.status.phase, 'Running');
    assert.equal(ready(d)?.status, 'False');
    assert.equal(ready(d)?.reason, 'NodeUnresponsive');
    assert.match(ready(d)?.message ?? '', /node01/);
    assert.deepEqual(d.deletePods, []);
    assert.deepEqual(d.events, []);
    assert.equal(d.requeueAfterMs, undefined);
  });

  test('the handler beats again: Ready is the pod\'s again', () => {
    const silent = decideVmi({ vmi: vmiFixture({ status: running }), pods: [launcherPod({ node: 'node01', phase: 'Running', ready: true })], now, nodeUnresponsive: true });
    const back = decideVmi({ vmi: vmiFixture({ status: silent.status }), pods: [launcherPod({ node: 'node01', phase: 'Running', ready: true })], now });
    assert.equal(ready(back)?.status, 'True');
    assert.equal(back.status.phase, 'Running');
  });

  test('the launcher pod is gone: Failed NodeUnresponsive with a Normal Event', () => {
    const d = decideVmi({ vmi: vmiFixture({ status: running }), pods: [], now, nodeUnresponsive: true });
    assert.equal(d.status.phase, 'Failed');
    assert.equal(d.status.reason, 'NodeUnresponsive');
    assert.deepEqual(d.events.map((e) => `${e.type} ${e.reason}`), ['Normal NodeUnresponsive']);
  });

  test('the launcher pod just finished: Failed at once (no handler will write the end), not after the grace', () => {
    const finished = launcherPod({ node: 'node01', phase: 'Failed', computeFinishedAt: kubeTime(now) });
    const silent = decideVmi({ vmi: vmiFixture({ status: running }), pods: [finished], now, nodeUnresponsive: true });
    assert.equal(silent.status.phase, 'Failed');
    assert.equal(silent.status.reason, 'NodeUnresponsive');
    const alive = decideVmi({ vmi: vmiFixture({ status: running }), pods: [finished], now });
    assert.equal(alive.status.phase, 'Running', 'with a live handler the finished pod waits for its final phase');
  });

  test('a Scheduled VMI whose pod is gone fails with NodeUnresponsive; a final VMI is left alone', () => {
    assert.equal(decideVmi({ vmi: vmiFixture({ status: { phase: 'Scheduled', nodeName: 'node01' } }), pods: [], now, nodeUnresponsive: true }).status.reason, 'NodeUnresponsive');
    const done = vmiFixture({ status: { phase: 'Succeeded', nodeName: 'node01', reason: 'x' } });
    const d = decideVmi({ vmi: done, pods: [], now, nodeUnresponsive: true });
    assert.equal(d.status.phase, 'Succeeded');
    assert.equal(d.status.reason, 'x');
  });
});

describe('NodeController', () => {
  beforeEach(() => mock.timers.enable({ apis: ['setTimeout', 'Date', 'setImmediate'], now: T0 }));
  afterEach(() => mock.timers.reset());

  const settle = async (): Promise<void> => {
    for (let i = 0; i < 20; i++) await Promise.resolve();
  };

  test('labels a silent node unschedulable once at its timeout, hands the flip to the VMIs, writes nothing more while it is gone, and hands on its return', async () => {
    let current = node('node01', T0);
    const writes: string[] = [];
    const flips: string[] = [];
    const client: NodeClient = {
      markUnschedulable: async (name) => {
        writes.push(`unschedulable ${name}`);
        current = { ...current, metadata: { ...current.metadata, labels: { [NODE_SCHEDULABLE_LABEL]: 'false' } } };
      },
      recordNode: async (_n, type, reason) => void writes.push(`event ${type} ${reason}`),
    };
    const controller = new NodeController({
      log: pino({ level: 'silent' }),
      deps: {
        nodes: { getNode: () => current, listNodes: () => [current] },
        client,
        heartbeatTimeoutMs: TIMEOUT,
        now: () => new Date(),
        healthChanged: (name, unresponsive) => flips.push(`${name} ${unresponsive ? 'unresponsive' : 'responsive'}`),
      },
    });
    const stop = new AbortController();
    const running = controller.run(stop.signal);
    await settle();
    assert.deepEqual(writes, []);
    assert.deepEqual(flips, [], 'a node first seen fresh hands nothing on');
    mock.timers.tick(TIMEOUT - 1);
    await settle();
    assert.deepEqual(writes, []);
    mock.timers.tick(1);
    await settle();
    assert.deepEqual(writes, ['unschedulable node01', 'event Normal NodeUnresponsive']);
    assert.deepEqual(flips, ['node01 unresponsive']);
    // The label write comes back as a Node event; hours pass: no write, no flip.
    controller.nodeChanged(current);
    for (let i = 0; i < 12; i++) {
      mock.timers.tick(10 * 60_000);
      await settle();
    }
    assert.equal(writes.length, 2);
    assert.equal(flips.length, 1);
    // The handler is back: it relabels and stamps; the controller hands the flip on and writes nothing.
    current = node('node01', Date.now());
    controller.nodeChanged(current);
    await settle();
    assert.equal(writes.length, 2);
    assert.deepEqual(flips, ['node01 unresponsive', 'node01 responsive']);
    stop.abort();
    await running;
  });

  test('a node already silent and labelled unschedulable (the handler stopped cleanly) gets no write, its VMIs still hear of it', async () => {
    const current = node('node01', T0 - TIMEOUT - 1, false);
    const writes: string[] = [];
    const flips: string[] = [];
    const controller = new NodeController({
      log: pino({ level: 'silent' }),
      deps: {
        nodes: { getNode: () => current, listNodes: () => [current] },
        client: { markUnschedulable: async () => void writes.push('patch'), recordNode: async () => void writes.push('event') },
        heartbeatTimeoutMs: TIMEOUT,
        now: () => new Date(),
        healthChanged: (name, unresponsive) => flips.push(`${name} ${String(unresponsive)}`),
      },
    });
    const stop = new AbortController();
    const running = controller.run(stop.signal);
    await settle();
    assert.deepEqual(writes, []);
    assert.deepEqual(flips, ['node01 true']);
    stop.abort();
    await running;
  });
});
