import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { pino } from 'pino';
import { ControllerError } from '../src/controller-error.js';
import { PodExpectations } from '../src/reconcile/pod-expectations.js';
import { syncVmi, type SyncDeps } from '../src/reconcile/sync-vmi.js';
import { FakeCluster } from './fake-cluster.js';
import { launcherPod, vmiFixture } from './fixtures.js';

const log = pino({ level: 'silent' });

function setup(): { cluster: FakeCluster; deps: SyncDeps; expectations: PodExpectations } {
  const cluster = new FakeCluster();
  const expectations = new PodExpectations();
  const deps: SyncDeps = {
    vmis: cluster,
    pods: cluster,
    vmiClient: cluster,
    podClient: cluster,
    events: cluster,
    expectations,
    podConfig: { image: 'podvirt/launcher:test', allowEmulation: true, random: () => 0 },
    now: () => new Date('2025-01-01T00:05:00Z'),
    log,
  };
  return { cluster, deps, expectations };
}

describe('syncVmi', () => {
  test('a new VMI gets the finalizer, then its pod, then Pending; events as KubeVirt records them', async () => {
    const { cluster, deps, expectations } = setup();
    cluster.addVmi(vmiFixture({ metadata: { finalizers: [] } }));
    await syncVmi(deps, 'default/testvmi');
    assert.deepEqual(cluster.calls, ['patch {"finalizers":["foregroundDeleteVirtualMachine"]}', 'create pod', 'status Pending']);
    const vmi = cluster.vmi('default', 'testvmi');
    assert.deepEqual(vmi.metadata.finalizers, ['foregroundDeleteVirtualMachine']);
    assert.equal(vmi.status?.phase, 'Pending');
    const pods = cluster.ownedBy('default', vmi.metadata.uid ?? '');
    assert.equal(pods.length, 1);
    assert.equal(pods[0]?.spec?.containers[0]?.image, 'podvirt/launcher:test');
    assert.deepEqual(cluster.events.map((e) => `${e.type} ${e.reason}`), ['Normal SuccessfulCreate']);
    assert.match(cluster.events[0]?.message ?? '', /^Created virtual machine pod virt-launcher-testvmi-/);
    assert.ok(expectations.pendingFor('default/testvmi') > 0, 'waits for the informer to see the pod');
  });

  test('while a created pod is not yet in the cache, no second pod is made', async () => {
    const { cluster, deps, expectations } = setup();
    cluster.addVmi(vmiFixture());
    expectations.expectCreation('default/testvmi');
    const result = await syncVmi(deps, 'default/testvmi');
    assert.deepEqual(cluster.calls, []);
    assert.ok((result.requeueAfterMs ?? 0) > 0);
    expectations.creationObserved('default/testvmi');
    await syncVmi(deps, 'default/testvmi');
    assert.deepEqual(cluster.calls, ['create pod', 'status Pending']);
  });

  test('a status conflict is retried on a fresh object; the node label follows the status', async () => {
    const { cluster, deps } = setup();
    cluster.addVmi(vmiFixture({ status: { phase: 'Scheduling' } }));
    cluster.addPod(launcherPod({ node: 'node01', phase: 'Running', ready: true }));
    cluster.conflictsToInject = 1;
    await syncVmi(deps, 'default/testvmi');
    assert.deepEqual(cluster.calls, [
      'status Scheduled',
      'read',
      'status Scheduled',
      'patch {"labels":{"kubevirt.io/nodeName":"node01"}}',
    ]);
    const vmi = cluster.vmi('default', 'testvmi');
    assert.equal(vmi.status?.phase, 'Scheduled');
    assert.equal(vmi.status?.nodeName, 'node01');
    assert.equal(vmi.metadata.labels?.['kubevirt.io/nodeName'], 'node01');
  });

  test('conflicts that never stop end in an error the queue retries with backoff', async () => {
    const { cluster, deps } = setup();
    cluster.addVmi(vmiFixture({ status: { phase: 'Pending' } }));
    cluster.addPod(launcherPod());
    cluster.conflictsToInject = 10;
    await assert.rejects(syncVmi(deps, 'default/testvmi'), { code: 'CONTROLLER_ERR_CONFLICT' });
  });

  test('a failed pod creation records FailedCreate, sets Synchronized=False and throws', async () => {
    const { cluster, deps, expectations } = setup();
    cluster.addVmi(vmiFixture());
    cluster.createFailure = 'exceeded quota';
    await assert.rejects(syncVmi(deps, 'default/testvmi'), { code: 'CONTROLLER_ERR_API_FAILED' });
    assert.deepEqual(cluster.events.map((e) => `${e.type} ${e.reason} ${e.message}`), ['Warning FailedCreate Error creating pod: exceeded quota']);
    const sync = cluster.vmi('default', 'testvmi').status?.conditions?.find((c) => c.type === 'Synchronized');
    assert.equal(sync?.reason, 'FailedCreate');
    assert.equal(expectations.pendingFor('default/testvmi'), 0, 'no pod is awaited after a failure');
  });

  test('a deleted, failed VMI: pod deleted, SuccessfulDelete, finalizer removed last', async () => {
    const { cluster, deps } = setup();
    cluster.addVmi(vmiFixture({ metadata: { deletionTimestamp: '2025-01-01T00:04:00Z' }, status: { phase: 'Failed', nodeName: 'node01' } }));
    cluster.addPod(launcherPod({ node: 'node01', phase: 'Failed' }));
    await syncVmi(deps, 'default/testvmi');
    assert.deepEqual(cluster.calls.slice(0, 1), ['delete pod virt-launcher-testvmi-abcde']);
    assert.equal(cluster.calls.at(-1), 'patch {"finalizers":[]}');
    assert.equal(cluster.get('default', 'testvmi'), undefined, 'the VMI is gone once its finalizer is');
    assert.deepEqual(cluster.events.map((e) => e.reason), ['SuccessfulDelete']);
  });

  test('a VMI deleted on the server while the cache still shows it: one debug line, no error, no requeue', async () => {
    const { cluster, deps } = setup();
    const stale = cluster.addVmi(vmiFixture({ status: { phase: 'Scheduled', nodeName: 'node01' } }));
    cluster.vmis.clear();
    const lines: Array<{ level: number; msg: string }> = [];
    const capture = pino({ level: 'debug' }, { write: (line: string) => lines.push(JSON.parse(line) as { level: number; msg: string }) });
    const staleStore = { get: () => structuredClone(stale), list: () => [structuredClone(stale)] };
    assert.deepEqual(await syncVmi({ ...deps, vmis: staleStore, log: capture }, 'default/testvmi'), {});
    assert.deepEqual(lines.map((l) => `${l.level} ${l.msg}`), ['20 VMI deleted mid-reconcile']);
    // A 404 while the VMI still exists (as this UID) is not about it, and still fails the pass.
    const notFound = async (): Promise<never> => Promise.reject(new ControllerError('CONTROLLER_ERR_NOT_FOUND', 'something not found'));
    const stillThere = { read: async () => Promise.resolve(structuredClone(stale)), replaceStatus: notFound, patchMetadata: notFound };
    await assert.rejects(syncVmi({ ...deps, vmis: staleStore, vmiClient: stillThere, log: capture }, 'default/testvmi'), { code: 'CONTROLLER_ERR_NOT_FOUND' });
  });

  test('a VMI gone from the cache is a no-op', async () => {
    const { cluster, deps } = setup();
    assert.deepEqual(await syncVmi(deps, 'default/nothing'), {});
    assert.deepEqual(cluster.calls, []);
  });
});
