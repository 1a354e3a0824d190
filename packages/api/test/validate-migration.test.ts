import assert from 'node:assert/strict';
import { test } from 'node:test';
import { asMigration, formatFieldErrors, isFinalMigrationPhase, validateMigration } from '../src/index.js';

const good = { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstanceMigration', metadata: { name: 'm1' }, spec: { vmiName: 'testvm' } };

test('validateMigration: a migration naming its VMI is accepted and typed', () => {
  assert.deepEqual(validateMigration(good), []);
  assert.equal(asMigration(good)?.spec.vmiName, 'testvm');
});

const rows: Array<[string, unknown, RegExp]> = [
  ['no spec', { ...good, spec: undefined }, /^spec: Required value: spec is required$/],
  ['no vmiName', { ...good, spec: {} }, /^spec\.vmiName: Required value/],
  ['an empty vmiName', { ...good, spec: { vmiName: '' } }, /^spec\.vmiName: Required value/],
  ['a vmiName that is no name', { ...good, spec: { vmiName: 'Not_A_Name' } }, /^spec\.vmiName: Invalid value: the string "Not_A_Name" is not a VMI name/],
  ['a number as vmiName', { ...good, spec: { vmiName: 3 } }, /^spec\.vmiName: Invalid value: number 3/],
  ['KubeVirt\'s addedNodeSelector', { ...good, spec: { vmiName: 'vm', addedNodeSelector: { a: 'b' } } }, /^spec\.addedNodeSelector: Unsupported value: podvirt does not support this field/],
  ['another kind', { ...good, kind: 'VirtualMachineInstance' }, /^kind: Unsupported value/],
  ['another API version', { ...good, apiVersion: 'kubevirt.io/v1alpha3' }, /^apiVersion: Unsupported value/],
  ['not an object', 'migrate please', /^Invalid value: a migration is an object, not the string/],
];

for (const [name, raw, want] of rows) {
  test(`validateMigration: ${name}`, () => {
    const errors = validateMigration(raw);
    assert.equal(errors.length, 1, formatFieldErrors(errors));
    assert.match(formatFieldErrors(errors), want);
    assert.equal(asMigration(raw), undefined);
  });
}

test('isFinalMigrationPhase: only Succeeded and Failed are final', () => {
  assert.deepEqual(['Pending', 'Scheduling', 'Scheduled', 'PreparingTarget', 'TargetReady', 'Running', 'Succeeded', 'Failed', ''].filter(isFinalMigrationPhase), ['Succeeded', 'Failed']);
});
