// The heartbeat against a fake node patcher, with mock timers: unschedulable first, then
// schedulable + an RFC 3339 stamp every interval plus jitter, unschedulable again on close.
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { HEARTBEAT_ANNOTATION, NODE_SCHEDULABLE_LABEL } from '@podvirt/api';
import { Heartbeat } from '../src/heartbeat/heartbeat.js';
import type { NodeMetadataPatch, NodePatcher } from '../src/heartbeat/node-patcher.js';
import { quietLog, T0 } from './fixtures.js';

class FakeNodePatcher implements NodePatcher {
  readonly patches: Array<{ node: string; patch: NodeMetadataPatch }> = [];
  failNext = 0;

  patchMetadata(node: string, patch: NodeMetadataPatch, signal: AbortSignal): Promise<void> {
    signal.throwIfAborted();
    if (this.failNext > 0) {
      this.failNext--;
      return Promise.reject(new Error('API server unavailable'));
    }
    this.patches.push({ node, patch: structuredClone(patch) });
    return Promise.resolve();
  }

  schedulable(): Array<string | undefined> {
    return this.patches.map((p) => p.patch.labels?.[NODE_SCHEDULABLE_LABEL]);
  }
}

// Lets the patch promise and the .finally() that arms the next timer run.
const settle = async (): Promise<void> => {
  for (let i = 0; i < 5; i++) await Promise.resolve();
};

function setup(t: TestContext, random = 0.5) {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  let now = T0;
  const patcher = new FakeNodePatcher();
  const heartbeat = new Heartbeat({ nodeName: 'node01', patcher, log: quietLog(), now: () => now, intervalMs: 60_000, jitter: 1.2, random: () => random });
  const advance = async (ms: number): Promise<void> => {
    now += ms;
    t.mock.timers.tick(ms);
    await settle();
  };
  return { patcher, heartbeat, advance };
}

test('unschedulable at start, schedulable with a fresh stamp on every beat, sliding jittered interval', async (t) => {
  const { patcher, heartbeat, advance } = setup(t);
  assert.equal(await heartbeat.markUnschedulable(), true);
  assert.deepEqual(patcher.patches[0], { node: 'node01', patch: { labels: { [NODE_SCHEDULABLE_LABEL]: 'false' } } });

  heartbeat.start();
  heartbeat.start();
  await settle();
  assert.deepEqual(patcher.patches[1]?.patch, {
    labels: { [NODE_SCHEDULABLE_LABEL]: 'true' },
    annotations: { [HEARTBEAT_ANNOTATION]: '2025-01-01T00:00:00Z' },
  });
  assert.equal(heartbeat.lastBeatMs, T0);

  // random 0.5 × jitter 1.2 × 60 s = 36 s on top of the 60 s interval.
  await advance(95_999);
  assert.equal(patcher.patches.length, 2);
  await advance(1);
  assert.equal(patcher.patches.length, 3);
  assert.equal(patcher.patches[2]?.patch.annotations?.[HEARTBEAT_ANNOTATION], '2025-01-01T00:01:36Z');

  await heartbeat.close();
  await heartbeat.close();
  assert.deepEqual(patcher.schedulable(), ['false', 'true', 'true', 'false']);
  await advance(500_000);
  assert.equal(patcher.patches.length, 4, 'no beat after close');
});

test('a failed beat is retried at the next period, and a failed unschedulable patch is reported, not thrown', async (t) => {
  const { patcher, heartbeat, advance } = setup(t, 0);
  patcher.failNext = 1;
  assert.equal(await heartbeat.markUnschedulable(), false);
  patcher.failNext = 1;
  heartbeat.start();
  await settle();
  assert.equal(patcher.patches.length, 0);
  assert.equal(heartbeat.lastBeatMs, undefined);
  await advance(60_000);
  assert.deepEqual(patcher.schedulable(), ['true']);
  await heartbeat.close();
  assert.deepEqual(patcher.schedulable(), ['true', 'false']);
});

test('close before start still marks the node unschedulable', async (t) => {
  const { patcher, heartbeat } = setup(t);
  await heartbeat.close();
  heartbeat.start();
  await settle();
  assert.deepEqual(patcher.schedulable(), ['false']);
});
