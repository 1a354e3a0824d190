import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import type { VmiMigrationState } from '@podvirt/api';
import { pino } from 'pino';
import { decideVmi } from '../src/decide/decide-vmi.js';
import { syncMigration, type MigrationSyncDeps } from '../src/reconcile/sync-migration.js';
import { FakeMigrationCluster } from './fake-migrations.js';
import { launcherPod, vmiFixture } from './fixtures.js';

const log = pino({ level: 'silent' });
const KEY = 'default/mig1';

function runningVmi(cluster: FakeMigrationCluster, migratable = true): void {
  cluster.addVmi(vmiFixture({
    metadata: { labels: { 'kubevirt.io/nodeName': 'node-a' } },
    status: {
      phase: 'Running',
      nodeName: 'node-a',
      conditions: [
        migratable
          ? { type: 'LiveMigratable', status: 'True', lastProbeTime: null, lastTransitionTime: null }
          : { type: 'LiveMigratable', status: 'False', reason: 'InterfaceNotLiveMigratable', message: 'cannot migrate VMI which does not use masquerade to connect to the pod network', lastProbeTime: null, lastTransitionTime: null },
      ],
    },
  }));
  cluster.addPod(launcherPod({ name: 'virt-launcher-testvmi-src', uid: 'src-uid', node: 'node-a', phase: 'Running', ready: true }));
}

function setup(): { cluster: FakeMigrationCluster; deps: MigrationSyncDeps } {
  const cluster = new FakeMigrationCluster();
  return { cluster, deps: cluster.deps(log) };
}

/** Syncs `key` and returns the writes it made; the created target pod is seen at once. */
async function sync(cluster: FakeMigrationCluster, deps: MigrationSyncDeps, key = KEY): Promise<string[]> {
  cluster.calls.length = 0;
  await syncMigration(deps, key);
  deps.expectations.forget(key);
  return [...cluster.calls];
}

function targetPod(cluster: FakeMigrationCluster): V1Pod | undefined {
  return [...cluster.podsByName.values()].find((p) => p.metadata?.labels?.['kubevirt.io/migrationJobUID'] !== undefined);
}

/** The scheduler and the target node's kubelet: the target pod runs on node-b. */
function startTarget(cluster: FakeMigrationCluster): void {
  const pod = targetPod(cluster);
  if (pod?.spec === undefined) throw new Error('no target pod');
  pod.spec.nodeName = 'node-b';
  pod.status = { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] };
}

/** A handler's write of the fields it owns. */
function handlerWrites(cluster: FakeMigrationCluster, fields: Partial<VmiMigrationState>): void {
  const vmi = cluster.vmi('default', 'testvmi');
  vmi.status = { ...vmi.status, migrationState: { ...vmi.status?.migrationState, ...fields } };
  vmi.metadata.resourceVersion = `${vmi.metadata.resourceVersion ?? ''}h`;
}

async function toPreparingTarget(cluster: FakeMigrationCluster, deps: MigrationSyncDeps): Promise<void> {
  runningVmi(cluster);
  cluster.addMigration('mig1');
  await sync(cluster, deps);
  startTarget(cluster);
  await sync(cluster, deps);
  await sync(cluster, deps);
  assert.equal(cluster.migration('mig1').status?.phase, 'PreparingTarget');
}

describe('syncMigration', () => {
  test('A → B: every phase in order, the hand-over, Events on both objects, and no write without a change', async () => {
    const { cluster, deps } = setup();
    runningVmi(cluster);
    cluster.addMigration('mig1');
    assert.deepEqual(await sync(cluster, deps), ['migration finalizers ["kubevirt.io/migrationJobFinalize"]', 'create pod', 'migration status Scheduling']);
    const pod = targetPod(cluster);
    assert.equal(pod?.metadata?.labels?.['kubevirt.io/migrationJobUID'], cluster.migration('mig1').metadata.uid);
    assert.deepEqual(pod?.spec?.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution, [
      { labelSelector: { matchLabels: { 'kubevirt.io/created-by': 'vmi-uid' } }, topologyKey: 'kubernetes.io/hostname' },
    ]);
    assert.deepEqual(await sync(cluster, deps), [], 'nothing changed, nothing written');

    startTarget(cluster);
    assert.deepEqual(await sync(cluster, deps), ['migration status Scheduled']);
    assert.deepEqual(await sync(cluster, deps), ['status Running', 'patch {"labels":{"kubevirt.io/migrationTargetNodeName":"node-b"}}', 'migration status PreparingTarget']);
    const state = cluster.vmi('default', 'testvmi').status?.migrationState;
    assert.deepEqual(state, { migrationUid: cluster.migration('mig1').metadata.uid, sourceNode: 'node-a', sourcePod: 'virt-launcher-testvmi-src', targetNode: 'node-b', targetPod: pod?.metadata?.name });
    assert.deepEqual(await sync(cluster, deps), []);

    handlerWrites(cluster, { targetNodeAddress: '10.0.0.2', targetDirectMigrationNodePorts: { '40001': 0 } } as Partial<VmiMigrationState>);
    assert.deepEqual(await sync(cluster, deps), ['migration status TargetReady']);
    handlerWrites(cluster, { startTimestamp: '2025-01-01T00:05:01Z', mode: 'PreCopy' });
    assert.deepEqual(await sync(cluster, deps), ['migration status Running']);
    handlerWrites(cluster, { completed: true, endTimestamp: '2025-01-01T00:05:09Z' });
    // Completed, but the target has not seen the domain yet: only the migration's copy of the state follows.
    assert.deepEqual(await sync(cluster, deps), ['migration status Running']);
    assert.deepEqual(await sync(cluster, deps), []);
    handlerWrites(cluster, { targetNodeDomainDetected: true, targetNodeDomainReadyTimestamp: '2025-01-01T00:05:10Z' });
    assert.deepEqual(await sync(cluster, deps), [
      'status Running',
      'patch {"labels":{"kubevirt.io/nodeName":"node-b","kubevirt.io/migrationTargetNodeName":null}}',
      'migration status Succeeded',
      'migration finalizers []',
    ]);
    assert.deepEqual(await sync(cluster, deps), []);

    const vmi = cluster.vmi('default', 'testvmi');
    assert.equal(vmi.status?.nodeName, 'node-b');
    assert.equal(vmi.metadata.labels?.['kubevirt.io/nodeName'], 'node-b');
    assert.equal(vmi.metadata.labels?.['kubevirt.io/migrationTargetNodeName'], undefined);
    assert.equal(vmi.status?.migrationState?.targetNodeAddress, '10.0.0.2', 'the handlers\' fields are kept');
    const vmim = cluster.migration('mig1');
    assert.deepEqual(vmim.status?.phaseTransitionTimestamps?.map((t) => t.phase), ['Pending', 'Scheduling', 'Scheduled', 'PreparingTarget', 'TargetReady', 'Running', 'Succeeded']);
    assert.equal(vmim.status?.migrationState?.completed, true);
    assert.deepEqual(cluster.migrationEvents.map((e) => e.reason), ['SuccessfulCreate', 'Migrating', 'Migrated']);
    assert.deepEqual(cluster.events.map((e) => `${e.type} ${e.reason}`), ['Normal Migrating', 'Normal Migrated']);
    assert.match(cluster.events[1]?.message ?? '', /migrated to node node-b/);

    // The VMI controller now follows the target pod and lists both pods.
    const decision = decideVmi({ vmi, pods: cluster.ownedBy('default', 'vmi-uid'), now: new Date('2025-01-01T00:06:00Z') });
    assert.equal(decision.status.phase, 'Running');
    assert.deepEqual(decision.status.activePods, { 'src-uid': 'node-a', [pod?.metadata?.uid ?? '']: 'node-b' });
  });

  test('the VMI controller does not take a failed target pod for the VMI\'s own', () => {
    const vmi = vmiFixture({ status: { phase: 'Running', nodeName: 'node-a' } });
    const source = launcherPod({ name: 'src', uid: 'src-uid', node: 'node-a', phase: 'Running', ready: true });
    const target = launcherPod({ name: 'tgt', uid: 'tgt-uid', node: 'node-b', phase: 'Failed', created: '2025-01-01T00:04:00Z', computeFinishedAt: '2025-01-01T00:04:10Z' });
    target.metadata = { ...target.metadata, labels: { ...target.metadata?.labels, 'kubevirt.io/migrationJobUID': 'm' } };
    const decision = decideVmi({ vmi, pods: [target, source], now: new Date('2025-01-01T00:15:00Z') });
    assert.equal(decision.status.phase, 'Running');
    assert.equal(decision.statusChanged, true);
    assert.deepEqual(decision.status.activePods, { 'src-uid': 'node-a', 'tgt-uid': 'node-b' });
    assert.deepEqual(decision.deletePods, []);
  });

  for (const c of [
    { name: 'a VMI that is not Running', vmi: (cl: FakeMigrationCluster) => cl.addVmi(vmiFixture({ status: { phase: 'Scheduled', nodeName: 'node-a' } })), reason: 'VMINotRunning', text: /is Scheduled, not Running/ },
    { name: 'a VMI that is not live migratable', vmi: (cl: FakeMigrationCluster) => runningVmi(cl, false), reason: 'NotLiveMigratable', text: /InterfaceNotLiveMigratable: cannot migrate VMI which does not use masquerade/ },
    { name: 'a VMI that does not exist', vmi: () => undefined, reason: 'VMIDoesNotExist', text: /VMI testvmi does not exist/ },
  ]) {
    test(`${c.name} is refused: Failed, a MigrationRejected condition, a Warning Event, nothing created`, async () => {
      const { cluster, deps } = setup();
      c.vmi(cluster);
      cluster.addMigration('mig1');
      assert.deepEqual(await sync(cluster, deps), ['migration status Failed']);
      const vmim = cluster.migration('mig1');
      assert.equal(vmim.status?.phase, 'Failed');
      const condition = vmim.status?.conditions?.find((x) => x.type === 'MigrationRejected');
      assert.equal(condition?.status, 'True');
      assert.equal(condition?.reason, c.reason);
      assert.match(condition?.message ?? '', c.text);
      assert.deepEqual(cluster.migrationEvents.map((e) => `${e.type} ${e.reason}`), ['Warning MigrationFailed']);
      assert.match(cluster.migrationEvents[0]?.message ?? '', c.text);
      assert.equal(targetPod(cluster), undefined);
      assert.deepEqual(await sync(cluster, deps), [], 'a refused migration is settled');
    });
  }

  test('a second migration of the same VMI waits in Pending until the first has ended', async () => {
    const { cluster, deps } = setup();
    await toPreparingTarget(cluster, deps);
    cluster.addMigration('mig2', '2025-01-01T00:04:30Z');
    assert.deepEqual(await sync(cluster, deps, 'default/mig2'), ['migration status Pending']);
    assert.deepEqual(await sync(cluster, deps, 'default/mig2'), []);
    handlerWrites(cluster, { startTimestamp: 't', failed: true, completed: true, failureReason: 'boom' });
    await sync(cluster, deps);
    assert.equal(cluster.migration('mig1').status?.phase, 'Failed');
    assert.deepEqual(await sync(cluster, deps, 'default/mig2'), ['migration finalizers ["kubevirt.io/migrationJobFinalize"]', 'create pod', 'migration status Scheduling']);
  });

  test('a target pod that cannot pull its image fails the migration; the pod goes, the VMI is untouched', async () => {
    const { cluster, deps } = setup();
    runningVmi(cluster);
    cluster.addMigration('mig1');
    await sync(cluster, deps);
    const pod = targetPod(cluster);
    if (pod === undefined) throw new Error('no target pod');
    pod.spec = { ...pod.spec, containers: pod.spec?.containers ?? [], nodeName: 'node-b' };
    pod.status = { phase: 'Pending', containerStatuses: [{ name: 'compute', image: 'x', imageID: '', ready: false, restartCount: 0, state: { waiting: { reason: 'ErrImagePull', message: 'image "nope:1" not found' } } }] };
    const before = structuredClone(cluster.vmi('default', 'testvmi'));
    assert.deepEqual(await sync(cluster, deps), [`delete pod ${pod.metadata?.name ?? ''}`, 'migration status Failed', 'migration finalizers []']);
    assert.equal(targetPod(cluster), undefined);
    assert.deepEqual(cluster.vmi('default', 'testvmi'), before);
    assert.match(cluster.migration('mig1').status?.migrationState?.failureReason ?? '', /ErrImagePull: image "nope:1" not found/);
    assert.deepEqual(cluster.events.map((e) => e.reason), ['MigrationFailed']);
    assert.deepEqual(await sync(cluster, deps), []);
  });

  test('deleting the migration before the source started it cancels it at once and ends the VMI\'s migrationState', async () => {
    const { cluster, deps } = setup();
    await toPreparingTarget(cluster, deps);
    const pod = targetPod(cluster)?.metadata?.name ?? '';
    cluster.deleteMigration('mig1');
    assert.deepEqual(await sync(cluster, deps), [
      'status Running',
      'patch {"labels":{"kubevirt.io/migrationTargetNodeName":null}}',
      `delete pod ${pod}`,
      'migration status Failed',
      'migration finalizers []',
    ]);
    assert.equal(cluster.migrations.size, 0, 'the finalizer is off, the migration is gone');
    const state = cluster.vmi('default', 'testvmi').status?.migrationState;
    assert.equal(state?.failed, true);
    assert.equal(state?.abortRequested, true);
    assert.match(state?.failureReason ?? '', /cancelled/);
    assert.equal(cluster.vmi('default', 'testvmi').status?.nodeName, 'node-a');
  });

  test('deleting a running migration asks the source to abort and waits for it', async () => {
    const { cluster, deps } = setup();
    await toPreparingTarget(cluster, deps);
    handlerWrites(cluster, { targetNodeAddress: '10.0.0.2', startTimestamp: 't0' });
    await sync(cluster, deps);
    assert.equal(cluster.migration('mig1').status?.phase, 'Running');
    cluster.deleteMigration('mig1');
    assert.deepEqual(await sync(cluster, deps), ['status Running', 'migration status Running']);
    assert.equal(cluster.vmi('default', 'testvmi').status?.migrationState?.abortRequested, true);
    assert.equal(cluster.migration('mig1').status?.conditions?.[0]?.type, 'MigrationAbortRequested');
    assert.deepEqual(await sync(cluster, deps), [], 'waits for the source without writing');
    handlerWrites(cluster, { abortStatus: 'Succeeded', failed: true, completed: true, failureReason: 'migration aborted' });
    const calls = await sync(cluster, deps);
    assert.deepEqual(calls.slice(-2), ['migration status Failed', 'migration finalizers []']);
    assert.equal(cluster.migrations.size, 0);
    assert.equal(targetPod(cluster), undefined);
    assert.match(cluster.migrationEvents.at(-1)?.message ?? '', /^MigrationAborted: migration aborted/);
  });

  test('the VMI deleted during the migration fails it and removes the target pod', async () => {
    const { cluster, deps } = setup();
    await toPreparingTarget(cluster, deps);
    cluster.vmi('default', 'testvmi').metadata.deletionTimestamp = '2025-01-01T00:05:30Z';
    const calls = await sync(cluster, deps);
    assert.deepEqual(calls, [`delete pod ${calls[0]?.slice('delete pod '.length) ?? ''}`, 'migration status Failed', 'migration finalizers []']);
    assert.equal(targetPod(cluster), undefined);
    assert.match(cluster.migrationEvents.at(-1)?.message ?? '', /^VMIDeleted:/);
  });

  test('the source\'s failure fails the migration: target pod deleted, label removed, VMI stays on its node', async () => {
    const { cluster, deps } = setup();
    await toPreparingTarget(cluster, deps);
    handlerWrites(cluster, { targetNodeAddress: '10.0.0.2', startTimestamp: 't0', failed: true, completed: true, failureReason: 'progress timeout' });
    const calls = await sync(cluster, deps);
    assert.deepEqual(calls.slice(0, 1), ['patch {"labels":{"kubevirt.io/migrationTargetNodeName":null}}']);
    assert.equal(targetPod(cluster), undefined);
    assert.equal(cluster.migration('mig1').status?.phase, 'Failed');
    assert.equal(cluster.vmi('default', 'testvmi').status?.nodeName, 'node-a');
    assert.equal(cluster.vmi('default', 'testvmi').status?.migrationState?.failureReason, 'progress timeout', 'the source\'s words are kept');
    assert.deepEqual(cluster.events.map((e) => `${e.type} ${e.reason}`), ['Normal Migrating', 'Warning MigrationFailed']);
  });

  test('a status conflict is redone on fresh objects', async () => {
    const { cluster, deps } = setup();
    runningVmi(cluster);
    cluster.addMigration('mig1');
    await sync(cluster, deps);
    startTarget(cluster);
    await sync(cluster, deps);
    cluster.conflictsToInject = 1;
    const calls = await sync(cluster, deps);
    assert.deepEqual(calls.slice(0, 3), ['status Running', 'read migration', 'read']);
    assert.equal(cluster.migration('mig1').status?.phase, 'PreparingTarget');
  });
});
