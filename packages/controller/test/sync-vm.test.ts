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
    const cluster = new FakeVms();
    cluster.addVm(vmFixture());
    const deps = depsFor(cluster);
    await syncVm(deps, KEY);
    cluster.observe();
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

  test('a VMI of the same name that the VM does not control is left alone', async () => {
    const cluster = new FakeVms();
    cluster.addVm(vmFixture());
    const foreign = { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', metadata: { name: 'testvm', namespace: 'default', uid: 'x' }, spec: vmFixture().spec.template.spec };
    cluster.apiVmis.set(KEY, foreign);
    cluster.observe();
    await syncVm(depsFor(cluster), KEY);
    assert.deepEqual(cluster.calls, ['update VM status']);
    assert.match(cluster.vm().status?.conditions?.find((c) => c.type === 'Failure')?.message ?? '', /not controlled by this VM/);
  });
});
