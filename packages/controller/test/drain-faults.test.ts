// A drain's fault: the only other node is cordoned while the evacuation's migration waits for its
// target pod. The migration fails cleanly (TargetPodUnschedulable, its target pod deleted, the VMI
// untouched on its node); the evacuation makes the next one only after its backoff, so the drain's
// 429s go on meanwhile without a migration storm.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { pino } from 'pino';
import type { VirtualMachineInstanceMigration } from '@podvirt/api';
import { DEFAULT_UNSCHEDULABLE_TIMEOUT_MS } from '../src/decide/decide-migration.js';
import { decideEvacuation, EVACUATION_ANNOTATION, EVACUATION_BACKOFF_MS } from '../src/decide/decide-evacuation.js';
import { syncMigration } from '../src/reconcile/sync-migration.js';
import { FakeMigrationCluster } from './fake-migrations.js';
import { launcherPod, vmiFixture } from './fixtures.js';

const log = pino({ level: 'silent' });
const T0 = Date.parse('2025-01-01T00:05:00Z');

describe('a drain whose target node is cordoned meanwhile', () => {
  test('the evacuation migration fails TargetPodUnschedulable after the timeout, the VMI stays whole, the next one waits the backoff', async () => {
    const cluster = new FakeMigrationCluster();
    cluster.addVmi(vmiFixture({
      metadata: { labels: { 'kubevirt.io/nodeName': 'node-a' } },
      status: { phase: 'Running', nodeName: 'node-a', evacuationNodeName: 'node-a', conditions: [{ type: 'LiveMigratable', status: 'True', lastProbeTime: null, lastTransitionTime: null }] },
    }));
    cluster.addPod(launcherPod({ name: 'virt-launcher-testvmi-src', uid: 'src-uid', node: 'node-a', phase: 'Running', ready: true }));
    cluster.addMigration('kubevirt-evacuation-1');
    cluster.migration('kubevirt-evacuation-1').metadata.annotations = { [EVACUATION_ANNOTATION]: 'node-a' };
    const syncAt = async (ms: number): Promise<void> => {
      const deps = cluster.deps(log, new Date(ms));
      await syncMigration(deps, 'default/kubevirt-evacuation-1');
      deps.expectations.forget('default/kubevirt-evacuation-1');
    };
    await syncAt(T0);
    const target = [...cluster.podsByName.values()].find((p) => p.metadata?.labels?.['kubevirt.io/migrationJobUID'] !== undefined);
    assert.ok(target !== undefined, 'a target pod');
    // The scheduler: node-b cordoned, node-a is the source: no node takes it.
    target.status = { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: '0/2 nodes are available: 1 node(s) were unschedulable', lastTransitionTime: new Date(T0) }] };
    const before = structuredClone(cluster.vmi('default', 'testvmi'));
    await syncAt(T0 + DEFAULT_UNSCHEDULABLE_TIMEOUT_MS - 1);
    assert.equal(cluster.migration('kubevirt-evacuation-1').status?.phase, 'Scheduling', 'waited for, within the timeout');
    await syncAt(T0 + DEFAULT_UNSCHEDULABLE_TIMEOUT_MS);
    const failed = cluster.migration('kubevirt-evacuation-1');
    assert.equal(failed.status?.phase, 'Failed');
    assert.match(failed.status?.migrationState?.failureReason ?? '', /no node can take the target pod: 0\/2 nodes are available/);
    assert.equal([...cluster.podsByName.values()].some((p) => p.metadata?.labels?.['kubevirt.io/migrationJobUID'] !== undefined), false, 'the target pod is deleted');
    assert.deepEqual(cluster.vmi('default', 'testvmi').status?.nodeName, before.status?.nodeName);
    assert.equal(cluster.vmi('default', 'testvmi').status?.evacuationNodeName, 'node-a', 'still marked: the drain goes on asking');

    // The evacuation: one more migration, only after its backoff from the failure.
    const vmi = cluster.vmi('default', 'testvmi');
    const failedAt = Date.parse(failed.status?.phaseTransitionTimestamps?.find((p) => p.phase === 'Failed')?.phaseTransitionTimestamp ?? '');
    assert.ok(Number.isFinite(failedAt), 'the failure is stamped');
    const decide = (ms: number) => decideEvacuation({ vmi, migrations: [failed as VirtualMachineInstanceMigration], clusterDefault: 'LiveMigrate', creationPending: false, now: new Date(ms) });
    assert.equal(decide(failedAt + 1_000).kind, 'wait');
    assert.equal(decide(failedAt + EVACUATION_BACKOFF_MS).kind, 'create');
  });
});
