import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, mock, test } from 'node:test';
import { pino } from 'pino';
import { PodExpectations } from '../src/reconcile/pod-expectations.js';
import { syncVm, type VmSyncDeps, type WrittenStatus } from '../src/reconcile/sync-vm.js';
import { FakeVms } from './fake-vms.js';
import { vmFixture } from './vm-fixtures.js';

const log = pino({ level: 'silent' });
const KEY = 'default/testvm';

function depsFor(cluster: FakeVms, random = (): number => 0): VmSyncDeps {
  return {
    vms: cluster,
    vmis: cluster,
    vmClient: cluster,
    events: cluster,
    expectations: new PodExpectations(),
    written: new Map<string, WrittenStatus>(),
    now: () => new Date(),
    random,
    log,
  };
}

/** A cluster whose VM has had its first sync (its VMI made), the informers caught up. */
async function afterFirstSync(vm = vmFixture()): Promise<{ cluster: FakeVms; deps: VmSyncDeps }> {
  const cluster = new FakeVms();
  cluster.addVm(vm);
  const deps = depsFor(cluster);
  await syncVm(deps, KEY);
  cluster.observe();
  return { cluster, deps };
}

describe('syncVm', () => {
  beforeEach(() => mock.timers.enable({ apis: ['Date'], now: Date.parse('2025-01-01T00:05:00Z') }));
  afterEach(() => mock.timers.reset());

  test('Always: one VMI from the template, owned by the VM, never a second while the cache lags', async () => {
    const cluster = new FakeVms();
    cluster.addVm(vmFixture());
    const deps = depsFor(cluster);
    await syncVm(deps, KEY);
    const vmi = cluster.apiVmis.get(KEY);
    assert.ok(vmi);
    assert.deepEqual(vmi.metadata.ownerReferences, [{ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', name: 'testvm', uid: 'vm-uid', controller: true, blockOwnerDeletion: true }]);
    assert.deepEqual(vmi.metadata.labels, { 'kubevirt.io/domain': 'testvm', 'kubevirt.io/vm': 'testvm' });
    assert.equal(vmi.metadata.annotations?.['kubevirt.io/vm-generation'], '1');
    assert.deepEqual(cluster.events.map((e) => `${e.type} ${e.reason}`), ['Normal SuccessfulCreate']);
    assert.equal(cluster.vm().status?.printableStatus, 'Starting');
    // The informers have not seen the VMI yet: nothing is created again.
    await syncVm(deps, KEY);
    await syncVm(deps, KEY);
    assert.equal(cluster.calls.filter((c) => c === 'create VMI').length, 1);
    cluster.observe();
    cluster.setVmiPhase('Running');
    await syncVm(deps, KEY);
    assert.equal(cluster.vm().status?.printableStatus, 'Running');
    assert.equal(cluster.vm().status?.ready, true);
    const writes = cluster.calls.length;
    cluster.observe();
    await syncVm(deps, KEY);
    assert.equal(cluster.calls.length, writes, 'a resync with nothing new writes nothing');
  });

  test('crash loop: a VMI failing before it runs is replaced only after the back-off, even when the cache lags', async () => {
    const { cluster, deps } = await afterFirstSync();
    cluster.setVmiPhase('Failed');
    await syncVm(deps, KEY);
    assert.equal(cluster.apiVmis.has(KEY), false, 'the failed VMI is deleted');
    assert.deepEqual(cluster.vm().status?.startFailure, { consecutiveFailCount: 1, lastFailedVMIUID: 'vmi-1', retryAfterTimestamp: '2025-01-01T00:05:10Z' });
    // The VMI's deletion reaches the informer before the VM's status update does.
    cluster.cachedVmis.clear();
    const result = await syncVm(deps, KEY);
    assert.deepEqual(result, { requeueAfterMs: 10_000 });
    assert.equal(cluster.calls.filter((c) => c === 'create VMI').length, 1);
    cluster.observe();
    assert.equal(cluster.vm().status?.printableStatus, 'CrashLoopBackOff');
    mock.timers.tick(10_000);
    await syncVm(deps, KEY);
    assert.equal(cluster.calls.filter((c) => c === 'create VMI').length, 2, 'started again after 10 s');
    // The second early failure waits 40 s.
    cluster.observe();
    cluster.setVmiPhase('Failed');
    await syncVm(deps, KEY);
    cluster.observe();
    assert.equal(cluster.vm().status?.startFailure?.consecutiveFailCount, 2);
    assert.deepEqual(await syncVm(deps, KEY), { requeueAfterMs: 40_000 });
    // A VMI that reaches Running resets the count.
    mock.timers.tick(40_000);
    await syncVm(deps, KEY);
    cluster.observe();
    cluster.setVmiPhase('Running');
    await syncVm(deps, KEY);
    assert.equal(cluster.vm().status?.startFailure, undefined);
  });

  test('RerunOnFailure: a crash is restarted, a clean guest shutdown is not', async () => {
    const cluster = new FakeVms();
    cluster.addVm(vmFixture({ strategy: 'RerunOnFailure' }));
    const deps = depsFor(cluster);
    await syncVm(deps, KEY);
    cluster.observe();
    cluster.setVmiPhase('Running');
    await syncVm(deps, KEY);
    cluster.observe();
    cluster.setVmiPhase('Failed', true);
    await syncVm(deps, KEY);
    assert.deepEqual(cluster.vm().status?.stateChangeRequests, [{ action: 'Start' }]);
    cluster.observe();
    await syncVm(deps, KEY);
    assert.equal(cluster.calls.filter((c) => c === 'create VMI').length, 2, 'restarted at once: it had run');
    cluster.observe();
    cluster.setVmiPhase('Running');
    await syncVm(deps, KEY);
    cluster.observe();
    assert.equal(cluster.vm().status?.stateChangeRequests, undefined, 'the start request is done');
    cluster.setVmiPhase('Succeeded');
    await syncVm(deps, KEY);
    cluster.observe();
    await syncVm(deps, KEY);
    assert.equal(cluster.apiVmis.has(KEY), false);
    assert.equal(cluster.calls.filter((c) => c === 'create VMI').length, 2, 'not restarted after a clean shutdown');
    assert.equal(cluster.vm().status?.printableStatus, 'Stopped');
  });

  test('Halted with a start request: the strategy turns to Always, then the VMI is made', async () => {
    const cluster = new FakeVms();
    cluster.addVm(vmFixture({ strategy: 'Halted', status: { stateChangeRequests: [{ action: 'Start' }] } }));
    const deps = depsFor(cluster);
    await syncVm(deps, KEY);
    assert.equal(cluster.vm().spec.runStrategy, 'Always');
    cluster.observe();
    await syncVm(deps, KEY);
    assert.equal(cluster.apiVmis.has(KEY), true);
  });

  test('an invalid VM is named by field on the VM; nothing is created or stopped', async () => {
    const cluster = new FakeVms();
    const vm = vmFixture();
    vm.spec.running = true;
    vm.spec.template.spec.domain.devices.disks = [{ name: 'missing', disk: { bus: 'virtio' } }];
    cluster.addVm(vm);
    await syncVm(depsFor(cluster), KEY);
    assert.equal(cluster.apiVmis.size, 0);
    const failure = cluster.vm().status?.conditions?.find((c) => c.type === 'Failure');
    assert.equal(failure?.reason, 'FailedCreate');
    assert.match(failure?.message ?? '', /spec\.running: Invalid value/);
    assert.match(failure?.message ?? '', /spec\.template\.spec\.domain\.devices\.disks\[0\]/);
    assert.deepEqual(cluster.events.map((e) => `${e.type} ${e.reason}`), ['Warning FailedCreate']);
  });

  test('a VMI of the same name that another object controls is left alone', async () => {
    const cluster = new FakeVms();
    cluster.addVm(vmFixture());
    const foreign = {
      apiVersion: 'kubevirt.io/v1',
      kind: 'VirtualMachineInstance',
      metadata: { name: 'testvm', namespace: 'default', uid: 'x', ownerReferences: [{ apiVersion: 'example.com/v1', kind: 'Other', name: 'o', uid: 'other', controller: true }] },
      spec: vmFixture().spec.template.spec,
    };
    cluster.apiVmis.set(KEY, foreign);
    cluster.observe();
    await syncVm(depsFor(cluster), KEY);
    assert.deepEqual(cluster.calls, ['set VM finalizers', 'update VM status']);
    assert.deepEqual(cluster.apiVmis.get(KEY)?.metadata.ownerReferences, foreign.metadata.ownerReferences);
    assert.match(cluster.vm().status?.conditions?.find((c) => c.type === 'Failure')?.message ?? '', /controlled by another object/);
  });

  test('an ownerless VMI of the VM\'s name is adopted (after a fresh read of the VM), not made twice', async () => {
    const cluster = new FakeVms();
    cluster.addVm(vmFixture());
    const orphan = { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', metadata: { name: 'testvm', namespace: 'default', uid: 'orphan-uid', resourceVersion: '7' }, spec: vmFixture().spec.template.spec };
    cluster.apiVmis.set(KEY, orphan);
    cluster.observe();
    const deps = depsFor(cluster);
    await syncVm(deps, KEY);
    assert.deepEqual(cluster.calls, ['read VM', 'adopt VMI', 'set VM finalizers', 'update VM status']);
    assert.deepEqual(cluster.apiVmis.get(KEY)?.metadata.ownerReferences, [{ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', name: 'testvm', uid: 'vm-uid', controller: true, blockOwnerDeletion: true }]);
    assert.equal(cluster.apiVmis.get(KEY)?.metadata.uid, 'orphan-uid');
    assert.deepEqual(cluster.events.map((e) => `${e.type} ${e.reason}`), ['Normal SuccessfulAdopt']);
    assert.equal(cluster.vm().status?.created, true);
    assert.equal(cluster.vm().status?.conditions?.some((c) => c.type === 'Failure'), false);
    // A VM being deleted adopts nothing (the fresh read says so even when the cache does not).
    const other = new FakeVms();
    other.addVm(vmFixture());
    other.apiVmis.set(KEY, orphan);
    other.observe();
    other.apiVms.set(KEY, { ...vmFixture(), metadata: { ...vmFixture().metadata, deletionTimestamp: '2025-01-01T00:04:00Z' } });
    await syncVm(depsFor(other), KEY);
    assert.equal(other.calls.includes('adopt VMI'), false);
    assert.equal(other.apiVmis.get(KEY)?.metadata.ownerReferences, undefined);
  });

  test('finalizers: the VM gets its own before its VMI is made; the VMI carries it until it ended and the VM recorded how', async () => {
    const cluster = new FakeVms();
    cluster.addVm(vmFixture({ strategy: 'Manual', status: { stateChangeRequests: [{ action: 'Start' }] } }));
    const deps = depsFor(cluster);
    await syncVm(deps, KEY);
    assert.deepEqual(cluster.calls.slice(0, 2), ['set VM finalizers', 'create VMI']);
    assert.deepEqual(cluster.vm().metadata.finalizers, ['kubevirt.io/virtualMachineControllerFinalize']);
    assert.deepEqual(cluster.apiVmis.get(KEY)?.metadata.finalizers, ['kubevirt.io/virtualMachineControllerFinalize']);
    cluster.observe();
    cluster.setVmiPhase('Running');
    await syncVm(deps, KEY);
    assert.deepEqual(cluster.apiVmis.get(KEY)?.metadata.finalizers, ['kubevirt.io/virtualMachineControllerFinalize'], 'kept while it runs');
    cluster.observe();
    cluster.setVmiPhase('Succeeded');
    await syncVm(deps, KEY);
    assert.equal(cluster.vm().status?.printableStatus, 'Stopped', 'the end recorded first');
    assert.deepEqual(cluster.apiVmis.get(KEY)?.metadata.finalizers, [], 'then the finalizer comes off');
    assert.equal(cluster.calls.filter((c) => c === 'set VM finalizers').length, 1, 'the VM finalizer is added once');
  });

  test('deleting the VM stops its VMI gracefully and the VM goes once the VMI is gone; with orphaning it goes at once', async () => {
    const { cluster, deps } = await afterFirstSync();
    cluster.setVmiPhase('Running');
    await syncVm(deps, KEY);
    cluster.observe();
    const live = cluster.vm();
    cluster.addVm({ ...live, metadata: { ...live.metadata, deletionTimestamp: '2025-01-01T00:05:00Z' } });
    await syncVm(deps, KEY);
    assert.equal(cluster.apiVmis.has(KEY), false, 'the VMI was deleted');
    assert.equal(cluster.vm().status?.printableStatus, 'Terminating');
    assert.ok(cluster.apiVms.has(KEY), 'the VM waits for its VMI');
    assert.deepEqual(cluster.events.map((e) => e.reason), ['SuccessfulCreate', 'SuccessfulDelete']);
    cluster.observe();
    await syncVm(deps, KEY);
    assert.equal(cluster.apiVms.has(KEY), false, 'its finalizer came off: the VM is gone');

    const { cluster: orphaned, deps: d2 } = await afterFirstSync();
    const vm = orphaned.vm();
    orphaned.addVm({ ...vm, metadata: { ...vm.metadata, deletionTimestamp: '2025-01-01T00:05:00Z', finalizers: ['orphan', ...(vm.metadata.finalizers ?? [])] } });
    await syncVm(d2, KEY);
    assert.ok(orphaned.apiVmis.has(KEY), 'the VMI is left running');
    assert.deepEqual(orphaned.vm().metadata.finalizers, ['orphan'], 'only the garbage collector\'s finalizer is left');
  });

  test('a start request asking for a paused start is refused by name: no VMI, a Warning', async () => {
    const cluster = new FakeVms();
    cluster.addVm(vmFixture({ strategy: 'Manual', status: { stateChangeRequests: [{ action: 'Start', data: { startPaused: 'true' } }] } }));
    await syncVm(depsFor(cluster), KEY);
    assert.equal(cluster.apiVmis.size, 0);
    const failure = cluster.vm().status?.conditions?.find((c) => c.type === 'Failure');
    assert.match(failure?.message ?? '', /^status\.stateChangeRequests\[0\]\.data\.startPaused: Unsupported value/);
    assert.deepEqual(cluster.events.map((e) => `${e.type} ${e.reason}`), ['Warning FailedCreate']);
    assert.deepEqual(cluster.vm().status?.stateChangeRequests, [{ action: 'Start', data: { startPaused: 'true' } }], 'the request is left for the user to replace');
  });

  test('a VMI no VM controls any more loses the VM finalizer once it is going or ended', async () => {
    const cluster = new FakeVms();
    const vmi = { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', metadata: { name: 'testvm', namespace: 'default', uid: 'left', resourceVersion: '5', finalizers: ['foregroundDeleteVirtualMachine', 'kubevirt.io/virtualMachineControllerFinalize'] }, spec: vmFixture().spec.template.spec };
    cluster.apiVmis.set(KEY, vmi);
    cluster.observe();
    await syncVm(depsFor(cluster), KEY);
    assert.deepEqual(cluster.calls, [], 'a running orphan keeps it (a VM of its name may adopt it)');
    cluster.apiVmis.set(KEY, { ...vmi, metadata: { ...vmi.metadata, deletionTimestamp: '2025-01-01T00:05:00Z' } });
    cluster.observe();
    await syncVm(depsFor(cluster), KEY);
    assert.deepEqual(cluster.apiVmis.get(KEY)?.metadata.finalizers, ['foregroundDeleteVirtualMachine'], 'only ours comes off');

    // A VM of the same name again, while the earlier VM's VMI is still going: that one is let go too.
    const again = new FakeVms();
    again.addVm(vmFixture());
    const earlier = { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', name: 'testvm', uid: 'earlier-vm-uid', controller: true };
    again.apiVmis.set(KEY, { ...vmi, metadata: { ...vmi.metadata, ownerReferences: [earlier], deletionTimestamp: '2025-01-01T00:05:00Z' } });
    again.observe();
    await syncVm(depsFor(again), KEY);
    assert.deepEqual(again.apiVmis.get(KEY)?.metadata.finalizers, ['foregroundDeleteVirtualMachine']);
    assert.equal(again.calls.includes('create VMI'), false, 'no second VMI while it goes');
  });
});
