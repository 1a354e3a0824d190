import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { applyDefaults, type RunStrategy, type VirtualMachine, type VirtualMachineInstance, type VmPrintableStatus } from '@podvirt/api';
import { nextStartFailure, startBackoffSeconds } from '../src/decide/vm-start-backoff.js';
import { printableStatus } from '../src/decide/vm-printable-status.js';
import { nextVmStatus } from '../src/decide/vm-status.js';
import { vmFixture, vmVmi } from './vm-fixtures.js';

const nowMs = Date.parse('2025-01-01T00:05:00Z');
const now = '2025-01-01T00:05:00Z';
const noJitter = (): number => 0;
const fullJitter = (): number => 0.999_999;

describe('start back-off (KubeVirt numbers: 10 s × n², up to half again at random, capped at 300 s)', () => {
  test('grows with the square of the failures and is capped', () => {
    assert.deepEqual([1, 2, 3, 4, 5, 6, 10].map((n) => startBackoffSeconds(n, noJitter)), [10, 40, 90, 160, 250, 300, 300]);
    assert.deepEqual([1, 2, 3].map((n) => startBackoffSeconds(n, fullJitter)), [15, 60, 135]);
    assert.equal(startBackoffSeconds(0, noJitter), 10, 'a count below one counts as one');
  });

  test('a VMI that ends without ever running counts once; one that ran resets the count', () => {
    const vm = vmFixture();
    const failed = vmVmi(vm, 'Failed', { uid: 'a' });
    const first = nextStartFailure(undefined, failed, 'Always', nowMs, noJitter);
    assert.deepEqual(first, { consecutiveFailCount: 1, lastFailedVMIUID: 'a', retryAfterTimestamp: '2025-01-01T00:05:10Z' });
    assert.equal(nextStartFailure(first, failed, 'Always', nowMs + 5_000, noJitter), first, 'the same VMI is not counted twice');
    const second = nextStartFailure(first, vmVmi(vm, 'Failed', { uid: 'b' }), 'Always', nowMs, noJitter);
    assert.equal(second?.consecutiveFailCount, 2);
    assert.equal(second?.retryAfterTimestamp, '2025-01-01T00:05:40Z');
    assert.equal(nextStartFailure(second, vmVmi(vm, 'Failed', { uid: 'c', ran: true }), 'Always', nowMs, noJitter), undefined);
    assert.equal(nextStartFailure(second, undefined, 'Manual', nowMs, noJitter), undefined, 'a strategy that does not restart forgets it');
    assert.equal(nextStartFailure(second, undefined, 'RerunOnFailure', nowMs, noJitter), second, 'no VMI: kept');
  });
});

const pending = { startPending: false, stopPending: false };

interface StatusCase {
  readonly name: string;
  readonly expect: VmPrintableStatus;
  readonly vm?: VirtualMachine;
  readonly vmi?: (vm: VirtualMachine) => VirtualMachineInstance;
  readonly strategy?: RunStrategy;
  readonly startPending?: boolean;
  readonly stopPending?: boolean;
}

const cond = (type: string, status: string, reason?: string): { type: string; status: 'True' | 'False'; reason?: string } => ({ type, status: status as 'True' | 'False', ...(reason ? { reason } : {}) });

const statusCases: StatusCase[] = [
  { name: 'no VMI', expect: 'Stopped' },
  { name: 'no VMI, creation in flight', expect: 'Starting', startPending: true },
  { name: 'VMI Pending', expect: 'Starting', vmi: (vm) => vmVmi(vm, 'Pending') },
  { name: 'VMI not processed yet', expect: 'Starting', vmi: (vm) => vmVmi(vm, undefined) },
  { name: 'VMI Scheduled', expect: 'Starting', vmi: (vm) => vmVmi(vm, 'Scheduled') },
  { name: 'VMI Running', expect: 'Running', vmi: (vm) => vmVmi(vm, 'Running') },
  { name: 'VMI Running and paused', expect: 'Paused', vmi: (vm) => vmVmi(vm, 'Running', { status: { conditions: [cond('Paused', 'True')] } }) },
  { name: 'VMI being deleted', expect: 'Stopping', vmi: (vm) => vmVmi(vm, 'Running', { deleting: true }) },
  { name: 'VMI deleted in this sync', expect: 'Stopping', vmi: (vm) => vmVmi(vm, 'Running'), stopPending: true },
  { name: 'VM being deleted', expect: 'Terminating', vm: vmFixture({ deleting: true }), vmi: (vm) => vmVmi(vm, 'Running') },
  {
    name: 'VMI migrating',
    expect: 'Migrating',
    vmi: (vm) => vmVmi(vm, 'Running', { status: { migrationState: { startTimestamp: '2025-01-01T00:04:00Z' } } }),
  },
  { name: 'pod unschedulable', expect: 'ErrorUnschedulable', vmi: (vm) => vmVmi(vm, 'Scheduling', { status: { conditions: [cond('PodScheduled', 'False', 'Unschedulable')] } }) },
  { name: 'image pull failing', expect: 'ErrImagePull', vmi: (vm) => vmVmi(vm, 'Scheduling', { status: { conditions: [cond('Synchronized', 'False', 'ErrImagePull')] } }) },
  { name: 'image pull backing off', expect: 'ImagePullBackOff', vmi: (vm) => vmVmi(vm, 'Scheduling', { status: { conditions: [cond('Synchronized', 'False', 'ImagePullBackOff')] } }) },
  { name: 'PVC missing', expect: 'ErrorPvcNotFound', vmi: (vm) => vmVmi(vm, 'Pending', { status: { conditions: [cond('Synchronized', 'False', 'FailedPvcNotFound')] } }) },
  { name: 'VMI Succeeded', expect: 'Stopped', vmi: (vm) => vmVmi(vm, 'Succeeded') },
  { name: 'VMI phase Unknown (its node lost)', expect: 'Unknown', vmi: (vm) => vmVmi(vm, 'Unknown') },
  { name: 'VMI Failed, first failure', expect: 'Stopped', strategy: 'Manual', vmi: (vm) => vmVmi(vm, 'Failed') },
  {
    name: 'start failures under Always',
    expect: 'CrashLoopBackOff',
    vm: vmFixture({ status: { startFailure: { consecutiveFailCount: 2, retryAfterTimestamp: '2025-01-01T00:05:40Z' } } }),
  },
  {
    name: 'start failures under Manual: just stopped',
    expect: 'Stopped',
    strategy: 'Manual',
    vm: vmFixture({ strategy: 'Manual', status: { startFailure: { consecutiveFailCount: 2 } } }),
  },
];

describe('printableStatus: each VMI and pod situation', () => {
  for (const c of statusCases) {
    test(`${c.name} → ${c.expect}`, () => {
      const vm = c.vm ?? vmFixture();
      const vmi = c.vmi?.(vm);
      assert.equal(printableStatus(vm, vmi, c.strategy ?? 'Always', { startPending: c.startPending === true, stopPending: c.stopPending === true }), c.expect);
    });
  }
});

describe('nextVmStatus', () => {
  const input = { strategy: 'Always' as const, nowMs, now, random: noJitter, ...pending };

  test('running VMI: created, ready, Ready copied, generations, runStrategy recorded', () => {
    const vm = vmFixture({ generation: 2 });
    const vmi = vmVmi(vmFixture(), 'Running', { status: { conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2025-01-01T00:02:00Z' }, cond('LiveMigratable', 'True')] } });
    const status = nextVmStatus(vm, vmi, input);
    assert.equal(status.created, true);
    assert.equal(status.ready, true);
    assert.equal(status.printableStatus, 'Running');
    assert.equal(status.runStrategy, 'Always');
    assert.equal(status.desiredGeneration, 2);
    assert.equal(status.observedGeneration, 1);
    assert.deepEqual(status.conditions?.map((c) => `${c.type}=${c.status}`), ['Ready=True', 'LiveMigratable=True']);
    assert.equal(status.conditions?.[0]?.lastTransitionTime, '2025-01-01T00:02:00Z');
  });

  test('no VMI: Ready False VMINotExists, runStrategy not recorded before a VMI was ever made', () => {
    const status = nextVmStatus(vmFixture({ strategy: 'RerunOnFailure' }), undefined, { ...input, strategy: 'RerunOnFailure' });
    assert.equal(status.created, false);
    assert.equal(status.runStrategy, undefined);
    assert.equal(status.conditions?.[0]?.reason, 'VMINotExists');
    assert.equal(status.printableStatus, 'Stopped');
  });

  test('a template change while the VMI runs sets RestartRequired; it goes with the VMI', () => {
    const vm = vmFixture({ generation: 2 });
    vm.spec.template.spec.domain.resources = { requests: { memory: '256Mi' } };
    const vmi = vmVmi(vmFixture(), 'Running');
    const status = nextVmStatus(vm, vmi, input);
    assert.equal(status.conditions?.find((c) => c.type === 'RestartRequired')?.status, 'True');
    const after = nextVmStatus({ ...vm, status }, undefined, input);
    assert.equal(after.conditions?.some((c) => c.type === 'RestartRequired'), false);
  });

  test('a VMI stored with the defaults podvirt-api\'s webhook writes is its template: no RestartRequired; a changed template still is', () => {
    const vm = vmFixture();
    const running = vmVmi(vm, 'Running');
    const stored = { ...running, spec: applyDefaults(running).spec };
    assert.notDeepEqual(stored.spec, vm.spec.template.spec, 'the defaults add fields');
    assert.equal(nextVmStatus(vm, stored, input).conditions?.some((c) => c.type === 'RestartRequired'), false);
    const changed = vmFixture({ generation: 2 });
    changed.spec.template.spec.domain.resources = { requests: { memory: '256Mi' } };
    assert.equal(nextVmStatus(changed, stored, input).conditions?.find((c) => c.type === 'RestartRequired')?.status, 'True');
  });

  test('a stop request stays until its VMI is gone; a start request until a live VMI exists', () => {
    const vm = vmFixture({ status: { stateChangeRequests: [{ action: 'Stop', uid: 'vmi-uid' }, { action: 'Start' }] } });
    const running = vmVmi(vm, 'Running');
    assert.equal(nextVmStatus(vm, running, input).stateChangeRequests?.length, 2);
    const afterStop = nextVmStatus(vm, undefined, input);
    assert.deepEqual(afterStop.stateChangeRequests, [{ action: 'Start' }]);
    const vm2 = { ...vm, status: afterStop };
    assert.deepEqual(nextVmStatus(vm2, undefined, { ...input, startPending: true }).stateChangeRequests, [{ action: 'Start' }]);
    assert.equal(nextVmStatus(vm2, vmVmi(vm, 'Pending', { uid: 'new' }), input).stateChangeRequests, undefined);
  });

  test('a failed VMI surfaces its reason in Failure; a sync failure wins', () => {
    const vm = vmFixture({ strategy: 'Manual' });
    const failed = vmVmi(vm, 'Failed', { status: { reason: 'PodFailed' } });
    const status = nextVmStatus(vm, failed, { ...input, strategy: 'Manual' });
    assert.equal(status.conditions?.find((c) => c.type === 'Failure')?.reason, 'PodFailed');
    const invalid = nextVmStatus(vm, undefined, { ...input, failure: { reason: 'FailedCreate', message: 'invalid VirtualMachine: spec.running: …' } });
    assert.equal(invalid.conditions?.find((c) => c.type === 'Failure')?.reason, 'FailedCreate');
  });

  test('RerunOnFailure after a failure queues a start request', () => {
    const vm = vmFixture({ strategy: 'RerunOnFailure', status: { runStrategy: 'RerunOnFailure' } });
    const status = nextVmStatus(vm, vmVmi(vm, 'Failed'), { ...input, strategy: 'RerunOnFailure', addStartRequest: true, stopPending: true });
    assert.deepEqual(status.stateChangeRequests, [{ action: 'Start' }]);
    assert.equal(status.startFailure?.consecutiveFailCount, 1);
  });
});
