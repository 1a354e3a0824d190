import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { RunStrategy, StateChangeRequest, VirtualMachine, VirtualMachineInstance } from '@podvirt/api';
import { decideVm, type VmDecision } from '../src/decide/decide-vm.js';
import { vmFixture, vmVmi } from './vm-fixtures.js';

const nowMs = Date.parse('2025-01-01T00:05:00Z');
const stop: StateChangeRequest = { action: 'Stop', uid: 'vmi-uid' };
const start: StateChangeRequest = { action: 'Start' };

interface Case {
  readonly strategy: RunStrategy;
  readonly vmi?: string | undefined;
  readonly requests?: StateChangeRequest[];
  /** status.runStrategy: set once a VMI was made. */
  readonly acted?: boolean;
  readonly deleting?: boolean;
  readonly expect: VmDecision['action']['kind'];
  readonly addStartRequest?: boolean;
}

const cases: Case[] = [
  { strategy: 'Always', expect: 'create' },
  { strategy: 'Always', vmi: 'Running', expect: 'none' },
  { strategy: 'Always', vmi: 'Scheduling', expect: 'none' },
  { strategy: 'Always', vmi: 'Failed', expect: 'delete' },
  { strategy: 'Always', vmi: 'Succeeded', expect: 'delete' },
  { strategy: 'Always', vmi: 'Running', requests: [stop, start], expect: 'delete' },
  { strategy: 'Always', vmi: 'Failed', deleting: true, expect: 'none' },
  { strategy: 'RerunOnFailure', expect: 'create' },
  { strategy: 'RerunOnFailure', acted: true, expect: 'none' },
  { strategy: 'RerunOnFailure', acted: true, requests: [start], expect: 'create' },
  { strategy: 'RerunOnFailure', vmi: 'Running', expect: 'none' },
  { strategy: 'RerunOnFailure', vmi: 'Failed', acted: true, expect: 'delete', addStartRequest: true },
  { strategy: 'RerunOnFailure', vmi: 'Succeeded', acted: true, expect: 'delete' },
  { strategy: 'RerunOnFailure', vmi: 'Failed', deleting: true, acted: true, expect: 'none', addStartRequest: true },
  { strategy: 'RerunOnFailure', vmi: 'Failed', deleting: true, acted: true, requests: [start], expect: 'none' },
  { strategy: 'RerunOnFailure', vmi: 'Failed', deleting: true, acted: true, requests: [stop], expect: 'none' },
  { strategy: 'RerunOnFailure', vmi: 'Succeeded', deleting: true, acted: true, expect: 'none' },
  { strategy: 'RerunOnFailure', vmi: 'Running', requests: [stop], expect: 'delete' },
  { strategy: 'RerunOnFailure', vmi: 'Running', requests: [{ action: 'Stop', uid: 'older-vmi' }], expect: 'none' },
  { strategy: 'Manual', expect: 'none' },
  { strategy: 'Manual', requests: [start], expect: 'create' },
  { strategy: 'Manual', vmi: 'Failed', expect: 'none' },
  { strategy: 'Manual', vmi: 'Running', requests: [stop], expect: 'delete' },
  { strategy: 'Halted', expect: 'none' },
  { strategy: 'Halted', vmi: 'Running', expect: 'delete' },
  { strategy: 'Halted', vmi: 'Succeeded', expect: 'delete' },
  { strategy: 'Halted', requests: [start], expect: 'start-halted' },
  { strategy: 'Once', expect: 'create' },
  { strategy: 'Once', vmi: 'Failed', expect: 'none' },
  { strategy: 'Once', vmi: 'Succeeded', expect: 'none' },
];

function vmFor(c: Case): VirtualMachine {
  return vmFixture({ strategy: c.strategy, status: { ...(c.requests ? { stateChangeRequests: c.requests } : {}), ...(c.acted ? { runStrategy: c.strategy, created: true } : {}) } });
}

describe('decideVm: the run strategy table', () => {
  for (const c of cases) {
    const requests = c.requests?.map((r) => r.action + (r.uid ? `(${r.uid})` : '')).join(',') ?? '';
    test(`${c.strategy}, VMI ${c.vmi ?? 'none'}${c.deleting ? ' (deleting)' : ''}${requests ? `, requests ${requests}` : ''}${c.acted ? ', acted before' : ''} → ${c.expect}`, () => {
      const vm = vmFor(c);
      const vmi: VirtualMachineInstance | undefined = c.vmi === undefined ? undefined : vmVmi(vm, c.vmi, { deleting: c.deleting === true });
      const d = decideVm(vm, vmi, c.strategy, nowMs);
      assert.equal(d.action.kind, c.expect);
      assert.equal(d.addStartRequest === true, c.addStartRequest === true);
      if (d.action.kind === 'delete') assert.equal(d.action.uid, 'vmi-uid');
    });
  }

  test('a VM being deleted stops its VMI first, whatever its strategy; deleted with orphaning it leaves the VMI running', () => {
    const vm = vmFixture({ strategy: 'Always', deleting: true });
    const stop = decideVm(vm, vmVmi(vm, 'Running'), 'Always', nowMs);
    assert.deepEqual(stop.action, { kind: 'delete', uid: 'vmi-uid', why: 'the VirtualMachine is being deleted' });
    assert.equal(decideVm(vm, vmVmi(vm, 'Running', { deleting: true }), 'Always', nowMs).action.kind, 'none', 'already going');
    assert.equal(decideVm(vm, undefined, 'Always', nowMs).action.kind, 'none', 'nothing made for a VM being deleted');
    const orphaning = { ...vm, metadata: { ...vm.metadata, finalizers: ['orphan', 'kubevirt.io/virtualMachineControllerFinalize'] } };
    assert.equal(decideVm(orphaning, vmVmi(vm, 'Running'), 'Always', nowMs).action.kind, 'none');
  });

  test('a creation not yet in the cache is not repeated', () => {
    assert.equal(decideVm(vmFixture(), undefined, 'Always', nowMs, true).action.kind, 'none');
  });

  test('inside the back-off nothing is created and the VM looks again when it ends', () => {
    const vm = vmFixture({ status: { startFailure: { consecutiveFailCount: 2, retryAfterTimestamp: '2025-01-01T00:05:40Z' } } });
    assert.deepEqual(decideVm(vm, undefined, 'Always', nowMs), { action: { kind: 'none' }, requeueAfterMs: 40_000 });
    assert.equal(decideVm(vm, undefined, 'Always', nowMs + 40_000).action.kind, 'create');
  });
});
