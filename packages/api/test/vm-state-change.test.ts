import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { planVmStateChange, VmStateError, type RunStrategy, type VirtualMachine, type VirtualMachineInstance } from '../src/index.js';

function vm(runStrategy: RunStrategy): VirtualMachine {
  return { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', metadata: { namespace: 'ns', name: 'vm' }, spec: { runStrategy, template: { spec: { domain: { devices: {} } } } } };
}

function vmi(phase: string, terminationGracePeriodSeconds?: number): VirtualMachineInstance {
  return {
    apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', metadata: { namespace: 'ns', name: 'vm', uid: 'u1' },
    spec: { domain: { devices: {} }, ...(terminationGracePeriodSeconds === undefined ? {} : { terminationGracePeriodSeconds }) },
    status: { phase },
  } as unknown as VirtualMachineInstance;
}

const refusal = (f: () => unknown): string => {
  try {
    f();
  } catch (err) {
    assert.ok(err instanceof VmStateError);
    return `${err.code}: ${err.message}`;
  }
  assert.fail('not refused');
};

describe('planVmStateChange: KubeVirt\'s start, stop and restart rules', () => {
  test('start: a live VMI is already running whatever the strategy; a finished one is stopped first', () => {
    assert.match(refusal(() => planVmStateChange('start', vm('Halted'), vmi('Running'))), /^API_ERR_VM_RUNNING: VM ns\/vm is already running/);
    assert.match(refusal(() => planVmStateChange('start', vm('Always'), undefined)), /^API_ERR_VM_STRATEGY: .*runStrategy Always: it starts by itself/);
    assert.match(refusal(() => planVmStateChange('start', vm('RerunOnFailure'), vmi('Failed'))), /^API_ERR_VM_STRATEGY: .*restarting its failed VMI by itself/);
    assert.deepEqual(planVmStateChange('start', vm('Manual'), vmi('Succeeded')).write, { kind: 'requests', requests: [{ action: 'Stop', uid: 'u1' }, { action: 'Start' }], replace: false });
    assert.deepEqual(planVmStateChange('start', vm('Halted'), undefined).write, { kind: 'spec', running: true });
  });

  test('stop: Halted takes only a grace period shorter than the VMI\'s; a negative one is refused', () => {
    assert.match(refusal(() => planVmStateChange('stop', vm('Halted'), vmi('Running', 30))), /^API_ERR_VM_STRATEGY: .*only a shorter grace period/);
    assert.match(refusal(() => planVmStateChange('stop', vm('Halted'), vmi('Running', 30), { gracePeriodSeconds: 30 })), /only a shorter grace period/);
    assert.deepEqual(planVmStateChange('stop', vm('Halted'), vmi('Running', 30), { gracePeriodSeconds: 5 }), { write: { kind: 'requests', requests: [{ action: 'Stop', uid: 'u1' }], replace: true }, vmiGracePeriodSeconds: 5 });
    assert.match(refusal(() => planVmStateChange('stop', vm('Manual'), vmi('Running'), { gracePeriodSeconds: -1 })), /^API_ERR_VM_GRACE_PERIOD/);
    assert.match(refusal(() => planVmStateChange('stop', vm('Always'), vmi('Failed'))), /^API_ERR_VM_NOT_RUNNING/);
  });

  test('restart: grace period 0 sets the VMI\'s to 1 s; any other is refused; Once does not restart', () => {
    assert.equal(planVmStateChange('restart', vm('Always'), vmi('Running'), { gracePeriodSeconds: 0 }).vmiGracePeriodSeconds, 1);
    assert.equal(planVmStateChange('restart', vm('Always'), vmi('Running')).vmiGracePeriodSeconds, undefined);
    assert.match(refusal(() => planVmStateChange('restart', vm('Always'), vmi('Running'), { gracePeriodSeconds: 5 })), /^API_ERR_VM_GRACE_PERIOD: gracePeriodSeconds: a forced restart takes only 0/);
    assert.match(refusal(() => planVmStateChange('restart', vm('Once'), vmi('Running'))), /^API_ERR_VM_STRATEGY: .*runStrategy Once: it does not restart/);
  });
});
