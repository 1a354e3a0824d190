import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { EvictionStrategy, VirtualMachineInstance, VirtualMachineInstanceMigration } from '@podvirt/api';
import type { AdmissionRequest, AdmissionResult } from '../src/admission/admission-review.js';
import { podEvictionAdmitter, type EvictedPod } from '../src/admission/pod-eviction-admitter.js';

const NS = 'default';

function launcherPod(over: { node?: string; phase?: string; vmi?: string | null; label?: string } = {}): EvictedPod {
  return {
    metadata: {
      name: 'virt-launcher-vm1-abcde',
      labels: { 'kubevirt.io': over.label ?? 'virt-launcher' },
      annotations: over.vmi === null ? {} : { 'kubevirt.io/domain': over.vmi ?? 'vm1' },
    },
    spec: { nodeName: over.node ?? 'node-a' },
    status: { phase: over.phase ?? 'Running' },
  };
}

function vmi(over: { strategy?: EvictionStrategy; migratable?: boolean | undefined; node?: string; evacuation?: string; phase?: string } = {}): VirtualMachineInstance {
  const conditions = over.migratable === undefined
    ? []
    : [{ type: 'LiveMigratable', status: over.migratable ? 'True' : 'False', ...(over.migratable ? {} : { reason: 'DisksNotLiveMigratable', message: 'disk data is an emptyDisk' }) }];
  return {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachineInstance',
    metadata: { name: 'vm1', namespace: NS, uid: 'u-vm1' },
    spec: { domain: { devices: {} }, ...(over.strategy === undefined ? {} : { evictionStrategy: over.strategy }) },
    status: {
      phase: (over.phase ?? 'Running') as 'Running',
      nodeName: over.node ?? 'node-a',
      conditions: conditions as NonNullable<VirtualMachineInstance['status']>['conditions'],
      ...(over.evacuation === undefined ? {} : { evacuationNodeName: over.evacuation }),
    },
  } as VirtualMachineInstance;
}

function eviction(over: Partial<AdmissionRequest> = {}, object: unknown = { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'virt-launcher-vm1-abcde', namespace: NS } }): AdmissionRequest {
  return {
    uid: 'r1',
    kind: { group: 'policy', version: 'v1', kind: 'Eviction' },
    resource: { group: '', version: 'v1', resource: 'pods' },
    subResource: 'eviction',
    name: 'virt-launcher-vm1-abcde',
    namespace: NS,
    operation: 'CREATE',
    object,
    ...over,
  };
}

interface World {
  pod?: EvictedPod | Error | undefined;
  vmi?: VirtualMachineInstance | Error | undefined;
  markFails?: boolean;
  clusterDefault?: EvictionStrategy;
  migrations?: VirtualMachineInstanceMigration[] | Error;
}

const NOW = Date.parse('2026-01-01T12:00:00Z');

/** A migration of vm1; `evacuatedFrom` marks it as an evacuation's, `failedAgoMs` as failed then. */
function migration(name: string, phase: string, over: { evacuatedFrom?: string; failedAgoMs?: number; targetNode?: string; failureReason?: string } = {}): VirtualMachineInstanceMigration {
  return {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachineInstanceMigration',
    metadata: { name, namespace: NS, ...(over.evacuatedFrom === undefined ? {} : { annotations: { 'kubevirt.io/evacuationMigration': over.evacuatedFrom } }) },
    spec: { vmiName: 'vm1' },
    status: {
      phase,
      ...(over.failedAgoMs === undefined ? {} : { phaseTransitionTimestamps: [{ phase: 'Failed', phaseTransitionTimestamp: new Date(NOW - over.failedAgoMs).toISOString() }] }),
      migrationState: {
        ...(over.targetNode === undefined ? {} : { targetNode: over.targetNode }),
        ...(over.failureReason === undefined ? {} : { failed: true, failureReason: over.failureReason }),
      },
    },
  } as VirtualMachineInstanceMigration;
}

async function run(world: World, request = eviction()): Promise<{ result: AdmissionResult; marks: string[]; warnings: string[] }> {
  const marks: string[] = [];
  const warnings: string[] = [];
  const value = <T>(v: T | Error): Promise<T> => (v instanceof Error ? Promise.reject(v) : Promise.resolve(v));
  const admit = podEvictionAdmitter({
    getPod: () => value(world.pod),
    getVmi: () => value(world.vmi),
    listMigrations: () => value(world.migrations ?? []),
    now: () => new Date(NOW),
    markForEvacuation: async (target, node) => {
      if (world.markFails === true) throw new Error('conflict');
      marks.push(`${target.metadata.name ?? ''}@${node}`);
    },
    warn: (_vmi, reason, message) => warnings.push(`${reason}: ${message}`),
    clusterDefault: world.clusterDefault ?? 'None',
  });
  return { result: await admit(request), marks, warnings };
}

function refusal(result: AdmissionResult): { code: number; message: string } {
  assert.equal(result.allowed, false, 'expected a refusal');
  assert.ok(!result.allowed);
  return { code: result.status.code, message: result.status.message };
}

describe('eviction webhook', () => {
  const allowedRows: Array<[string, World]> = [
    ['None (explicit)', { pod: launcherPod(), vmi: vmi({ strategy: 'None', migratable: true }) }],
    ['None (cluster default, VMI names none)', { pod: launcherPod(), vmi: vmi({ migratable: true }) }],
    ['LiveMigrateIfPossible, not migratable', { pod: launcherPod(), vmi: vmi({ strategy: 'LiveMigrateIfPossible', migratable: false }) }],
    ['not a launcher pod', { pod: launcherPod({ label: 'other' }), vmi: vmi({ strategy: 'LiveMigrate', migratable: true }) }],
    ['a pod that is gone', { pod: undefined, vmi: vmi({ strategy: 'LiveMigrate', migratable: true }) }],
    ['a pod that cannot be read', { pod: new Error('boom'), vmi: vmi({ strategy: 'LiveMigrate', migratable: true }) }],
    ['a completed launcher pod (its VMI migrated away)', { pod: launcherPod({ phase: 'Succeeded' }), vmi: vmi({ strategy: 'LiveMigrate', migratable: true, node: 'node-b' }) }],
    ['a launcher pod without the domain annotation', { pod: launcherPod({ vmi: null }), vmi: vmi({ strategy: 'LiveMigrate', migratable: true }) }],
    ['a VMI that is gone', { pod: launcherPod(), vmi: undefined }],
    ['a VMI that has ended', { pod: launcherPod(), vmi: vmi({ strategy: 'LiveMigrate', migratable: true, phase: 'Succeeded' }) }],
  ];
  for (const [title, world] of allowedRows) {
    test(`allowed, nothing marked: ${title}`, async () => {
      const { result, marks, warnings } = await run(world);
      assert.deepEqual(result, { allowed: true });
      assert.deepEqual(marks, []);
      assert.deepEqual(warnings, []);
    });
  }

  const marked: Array<[string, World]> = [
    ['LiveMigrate, migratable', { pod: launcherPod(), vmi: vmi({ strategy: 'LiveMigrate', migratable: true }) }],
    ['LiveMigrateIfPossible, migratable', { pod: launcherPod(), vmi: vmi({ strategy: 'LiveMigrateIfPossible', migratable: true }) }],
    ['External, even not migratable', { pod: launcherPod(), vmi: vmi({ strategy: 'External', migratable: false }) }],
    ['the cluster default LiveMigrate', { pod: launcherPod(), vmi: vmi({ migratable: true }), clusterDefault: 'LiveMigrate' }],
  ];
  for (const [title, world] of marked) {
    test(`refused 429 and the VMI marked with its node: ${title}`, async () => {
      const { result, marks } = await run(world);
      const { code, message } = refusal(result);
      assert.equal(code, 429);
      assert.match(message, /^Eviction triggered evacuation of VMI "default\/vm1": /);
      assert.deepEqual(marks, ['vm1@node-a']);
    });
  }

  test('the VMI\'s own strategy wins over the cluster default', async () => {
    const { result } = await run({ pod: launcherPod(), vmi: vmi({ strategy: 'None', migratable: true }), clusterDefault: 'LiveMigrate' });
    assert.deepEqual(result, { allowed: true });
  });

  test('LiveMigrate on a VMI that cannot migrate: refused naming why, a Warning Event on the VMI, nothing marked', async () => {
    const { result, marks, warnings } = await run({ pod: launcherPod(), vmi: vmi({ strategy: 'LiveMigrate', migratable: false }) });
    const r = refusal(result);
    assert.equal(r.code, 429);
    assert.equal(r.message, 'VMI "default/vm1" has eviction strategy LiveMigrate but is not live migratable (DisksNotLiveMigratable: disk data is an emptyDisk): its launcher pod cannot be evicted');
    assert.deepEqual(marks, []);
    assert.deepEqual(warnings, [`EvictionNotMigratable: ${r.message}`]);
  });

  test('LiveMigrate before the handler reported LiveMigratable: refused, the message says so', async () => {
    const { result } = await run({ pod: launcherPod(), vmi: vmi({ strategy: 'LiveMigrate', migratable: undefined }) });
    assert.match(refusal(result).message, /not live migratable \(it has no LiveMigratable condition yet\)/);
  });

  test('a VMI already marked: refused again, not marked twice', async () => {
    const { result, marks } = await run({ pod: launcherPod(), vmi: vmi({ strategy: 'LiveMigrate', migratable: true, evacuation: 'node-a' }) });
    assert.deepEqual(refusal(result), { code: 429, message: 'Evacuation in progress: Eviction triggered evacuation of VMI "default/vm1": podvirt-controller migrates it away from node node-a' });
    assert.deepEqual(marks, []);
  });

  // What `kubectl drain` prints on each retry: where the evacuation stands.
  const live = (evacuation?: string): VirtualMachineInstance => vmi({ strategy: 'LiveMigrate', migratable: true, ...(evacuation === undefined ? {} : { evacuation }) });
  const noNode = 'no node can take the target pod: 0/2 nodes are available: 1 node(s) were unschedulable';
  const progressRows: Array<[string, World, string]> = [
    ['the first eviction', { pod: launcherPod(), vmi: live() },
      'Eviction triggered evacuation of VMI "default/vm1": podvirt-controller migrates it away from node node-a'],
    ['External: left to an outside actor', { pod: launcherPod(), vmi: vmi({ strategy: 'External', migratable: false }) },
      'Eviction triggered evacuation of VMI "default/vm1": its eviction strategy is External: an actor outside podvirt moves it away from node node-a'],
    ['a migration of the VMI (a user\'s) already running when the drain starts', { pod: launcherPod(), vmi: live(), migrations: [migration('mig-user', 'Running', { targetNode: 'node-b' })] },
      'Eviction triggered evacuation of VMI "default/vm1": migration mig-user to node node-b is Running'],
    ['the migration waits for its target pod to be placed', { pod: launcherPod(), vmi: live('node-a'), migrations: [migration('kubevirt-evacuation-x', 'Scheduling', { evacuatedFrom: 'node-a' })] },
      'Evacuation in progress: Eviction triggered evacuation of VMI "default/vm1": migration kubevirt-evacuation-x is Scheduling: its target pod waits for a node'],
    ['the migration was just created', { pod: launcherPod(), vmi: live('node-a'), migrations: [migration('kubevirt-evacuation-x', 'Pending', { evacuatedFrom: 'node-a' })] },
      'Evacuation in progress: Eviction triggered evacuation of VMI "default/vm1": migration kubevirt-evacuation-x is Pending'],
    ['the migration runs', { pod: launcherPod(), vmi: live('node-a'), migrations: [migration('kubevirt-evacuation-x', 'Running', { evacuatedFrom: 'node-a', targetNode: 'node-b' })] },
      'Evacuation in progress: Eviction triggered evacuation of VMI "default/vm1": migration kubevirt-evacuation-x to node node-b is Running'],
    ['the migration failed: no schedulable target, the next in the backoff', { pod: launcherPod(), vmi: live('node-a'), migrations: [migration('kubevirt-evacuation-x', 'Failed', { evacuatedFrom: 'node-a', failedAgoMs: 5_000, failureReason: noNode })] },
      `Evacuation in progress: Eviction triggered evacuation of VMI "default/vm1": migration kubevirt-evacuation-x failed (${noNode}); podvirt-controller tries again in 15 s (backoff after 1 failure, at most 5 min)`],
    ['two failures: the backoff doubled, the latest failure named', { pod: launcherPod(), vmi: live('node-a'), migrations: [
      migration('kubevirt-evacuation-y', 'Failed', { evacuatedFrom: 'node-a', failedAgoMs: 1_000, failureReason: 'the target pod is gone' }),
      migration('kubevirt-evacuation-x', 'Failed', { evacuatedFrom: 'node-a', failedAgoMs: 60_000, failureReason: noNode }),
    ] },
      'Evacuation in progress: Eviction triggered evacuation of VMI "default/vm1": migration kubevirt-evacuation-y failed (the target pod is gone); podvirt-controller tries again in 39 s (backoff after 2 failures, at most 5 min)'],
    ['the backoff is over', { pod: launcherPod(), vmi: live('node-a'), migrations: [migration('kubevirt-evacuation-x', 'Failed', { evacuatedFrom: 'node-a', failedAgoMs: 20_000, failureReason: noNode })] },
      `Evacuation in progress: Eviction triggered evacuation of VMI "default/vm1": migration kubevirt-evacuation-x failed (${noNode}); podvirt-controller migrates it again now`],
    ['a failed migration that was not the evacuation\'s (a user\'s) sets no backoff', { pod: launcherPod(), vmi: live('node-a'), migrations: [migration('mig-user', 'Failed', { failedAgoMs: 1_000, failureReason: 'aborted' })] },
      'Evacuation in progress: Eviction triggered evacuation of VMI "default/vm1": podvirt-controller migrates it away from node node-a'],
    ['the migrations cannot be read: still refused, saying so', { pod: launcherPod(), vmi: live('node-a'), migrations: new Error('forbidden') },
      'Evacuation in progress: Eviction triggered evacuation of VMI "default/vm1": podvirt-controller migrates it away from node node-a (its migrations could not be read: forbidden)'],
  ];
  for (const [title, world, message] of progressRows) {
    test(`the 429 says where the evacuation stands: ${title}`, async () => {
      const { result } = await run(world);
      assert.deepEqual(refusal(result), { code: 429, message });
    });
  }

  test('the target pod of a running migration (another node than the VMI\'s): refused, not marked', async () => {
    const { result, marks } = await run({ pod: launcherPod({ node: 'node-b' }), vmi: vmi({ strategy: 'LiveMigrate', migratable: true }) });
    assert.deepEqual(refusal(result), { code: 429, message: 'Eviction request for the target pod of VMI "default/vm1"' });
    assert.deepEqual(marks, []);
  });

  test('a dry run (request or deleteOptions) is refused the same way but marks nothing', async () => {
    const world = { pod: launcherPod(), vmi: vmi({ strategy: 'LiveMigrate', migratable: true }) };
    for (const request of [eviction({ dryRun: true }), eviction({}, { kind: 'Eviction', metadata: {}, deleteOptions: { dryRun: ['All'] } })]) {
      const { result, marks } = await run(world, request);
      assert.equal(refusal(result).code, 429);
      assert.deepEqual(marks, []);
    }
  });

  test('a VMI that cannot be read, or a mark that fails: refused (kubectl drain retries), never allowed', async () => {
    const unread = await run({ pod: launcherPod(), vmi: new Error('etcd down') });
    assert.match(refusal(unread.result).message, /could not read VMI "default\/vm1" of pod virt-launcher-vm1-abcde: etcd down/);
    const unmarked = await run({ pod: launcherPod(), vmi: vmi({ strategy: 'LiveMigrate', migratable: true }), markFails: true });
    assert.match(refusal(unmarked.result).message, /failed to mark VMI "default\/vm1" for evacuation: conflict/);
  });
});
