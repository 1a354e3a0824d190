import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { decodeVmi } from '@podvirt/api';
import type { AdmissionRequest } from '../src/admission/admission-review.js';
import { mutateVmiAdmission, validateMigrationAdmission, validateVmAdmission, validateVmiAdmission } from '../src/admission/admitters.js';

function vmi(name = 'vm1', bus = 'virtio'): Record<string, unknown> {
  return {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachineInstance',
    metadata: { name, namespace: 'default' },
    spec: {
      domain: { resources: { requests: { memory: '128Mi' } }, devices: { disks: [{ name: 'data', disk: { bus } }] } },
      volumes: [{ name: 'data', containerDisk: { image: 'img' } }],
    },
  };
}

function review(object: unknown, operation: AdmissionRequest['operation'] = 'CREATE', oldObject?: unknown): AdmissionRequest {
  return {
    uid: 'u1',
    kind: { group: 'kubevirt.io', version: 'v1', kind: 'VirtualMachineInstance' },
    resource: { group: 'kubevirt.io', version: 'v1', resource: 'virtualmachineinstances' },
    operation,
    object,
    ...(oldObject === undefined ? {} : { oldObject }),
  };
}

describe('VMI admission', () => {
  test('a valid VMI is allowed; an invalid one is refused 422 naming each field as the controller would', () => {
    assert.deepEqual(validateVmiAdmission(review(vmi())), { allowed: true });
    const bad = vmi('vm1', 'floppy');
    const result = validateVmiAdmission(review(bad));
    assert.equal(result.allowed, false);
    assert.ok(!result.allowed);
    assert.equal(result.status.code, 422);
    assert.equal(result.status.reason, 'Invalid');
    assert.match(result.status.message, /^VirtualMachineInstance "vm1" is invalid: spec\.domain\.devices\.disks\[0\]\.disk\.bus: Unsupported value/);
    // The same field paths decodeVmi gives the controller.
    assert.throws(() => decodeVmi(bad), (err: { fieldErrors: Array<{ field: string }> }) => {
      assert.deepEqual(result.status.details?.causes.map((c) => c.field), err.fieldErrors.map((e) => e.field));
      return true;
    });
    assert.equal(result.status.details?.causes[0]?.reason, 'FieldValueNotSupported');
    assert.match(result.status.details?.causes[0]?.message ?? '', /^Unsupported value: "floppy" is not supported/);
    assert.deepEqual([result.status.details?.kind, result.status.details?.name], ['VirtualMachineInstance', 'vm1']);
  });

  test('UPDATE: the spec may not change; metadata may', () => {
    const old = vmi();
    const relabelled = { ...vmi(), metadata: { name: 'vm1', namespace: 'default', labels: { a: 'b' } } };
    assert.deepEqual(validateVmiAdmission(review(relabelled, 'UPDATE', old)), { allowed: true });
    const changed = vmi('vm1', 'sata');
    const result = validateVmiAdmission(review(changed, 'UPDATE', old));
    assert.ok(!result.allowed);
    assert.equal(result.status.details?.causes[0]?.field, 'spec');
    assert.equal(result.status.details?.causes[0]?.reason, 'FieldValueForbidden');
  });

  test('UPDATE: hot-plugging a volume is the one spec change allowed, and the new spec is checked whole', () => {
    const old = vmi();
    const plugged = (bus: string): Record<string, unknown> => {
      const next = vmi() as { spec: { domain: { devices: { disks: unknown[] } }; volumes: unknown[] } };
      next.spec.domain.devices.disks.push({ name: 'hp', disk: { bus } });
      next.spec.volumes.push({ name: 'hp', persistentVolumeClaim: { claimName: 'c', hotpluggable: true } });
      return next as unknown as Record<string, unknown>;
    };
    assert.deepEqual(validateVmiAdmission(review(plugged('scsi'), 'UPDATE', old)), { allowed: true });
    assert.deepEqual(validateVmiAdmission(review(old, 'UPDATE', plugged('scsi'))), { allowed: true }, 'removal');
    const virtio = validateVmiAdmission(review(plugged('virtio'), 'UPDATE', old));
    assert.ok(!virtio.allowed);
    assert.equal(virtio.status.details?.causes[0]?.field, 'spec.domain.devices.disks[1].disk.bus');
    const alsoChanged = plugged('scsi') as { spec: { domain: { devices: { disks: Array<{ disk: { bus: string } }> } } } };
    alsoChanged.spec.domain.devices.disks[0]!.disk.bus = 'sata';
    const mixed = validateVmiAdmission(review(alsoChanged, 'UPDATE', old));
    assert.ok(!mixed.allowed);
    assert.equal(mixed.status.details?.causes[0]?.field, 'spec');
  });

  test('UPDATE: a forced stop may shorten terminationGracePeriodSeconds alone, checked whole; not lengthen it, nor change more', () => {
    const withGrace = (seconds: unknown, bus = 'virtio'): Record<string, unknown> => {
      const next = vmi('vm1', bus) as { spec: Record<string, unknown> };
      next.spec['terminationGracePeriodSeconds'] = seconds;
      return next as unknown as Record<string, unknown>;
    };
    assert.deepEqual(validateVmiAdmission(review(withGrace(0), 'UPDATE', withGrace(30))), { allowed: true });
    assert.deepEqual(validateVmiAdmission(review(withGrace(5), 'UPDATE', vmi())), { allowed: true }, 'from the default');
    const longer = validateVmiAdmission(review(withGrace(60), 'UPDATE', withGrace(30)));
    assert.ok(!longer.allowed);
    assert.equal(longer.status.details?.causes[0]?.field, 'spec');
    const negative = validateVmiAdmission(review(withGrace(-1), 'UPDATE', withGrace(30)));
    assert.ok(!negative.allowed);
    assert.equal(negative.status.details?.causes[0]?.field, 'spec.terminationGracePeriodSeconds');
    const more = validateVmiAdmission(review(withGrace(0, 'sata'), 'UPDATE', withGrace(30)));
    assert.ok(!more.allowed);
    assert.equal(more.status.details?.causes[0]?.field, 'spec');
  });

  test('mutation: a JSON patch that replaces the spec with the defaulted one; applying it again changes nothing', () => {
    const result = mutateVmiAdmission(review(vmi()));
    assert.ok(result.allowed);
    const patch = result.patch ?? [];
    assert.equal(patch.length, 1);
    assert.equal(patch[0]?.op, 'replace');
    assert.equal(patch[0]?.path, '/spec');
    const spec = patch[0]?.value as { domain: { machine: { type: string }; devices: { disks: Array<{ disk: { bus: string } }> } }; terminationGracePeriodSeconds: number };
    assert.equal(spec.domain.machine.type, 'q35');
    assert.equal(spec.terminationGracePeriodSeconds, 30);
    assert.deepEqual(spec, decodeVmi(vmi()).spec);
    const patched = { ...vmi(), spec };
    assert.deepEqual(mutateVmiAdmission(review(patched)), { allowed: true });
  });

  test('mutation lets through unchanged what validation refuses, and a VMI without a name yet (generateName)', () => {
    assert.deepEqual(mutateVmiAdmission(review(vmi('vm1', 'floppy'))), { allowed: true });
    const unnamed = vmi();
    (unnamed as { metadata: Record<string, unknown> }).metadata = { generateName: 'vm-', namespace: 'default' };
    assert.deepEqual(mutateVmiAdmission(review(unnamed)), { allowed: true });
    assert.deepEqual(mutateVmiAdmission(review(vmi(), 'UPDATE', vmi())), { allowed: true });
  });
});

describe('VM and migration admission', () => {
  test('a VM whose template is invalid is refused naming the template field', () => {
    const vm = { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', metadata: { name: 'v', namespace: 'default' }, spec: { runStrategy: 'Halted', template: { spec: { domain: { devices: {} } } } } };
    const result = validateVmAdmission(review(vm));
    assert.ok(!result.allowed);
    assert.match(result.status.message, /^VirtualMachine "v" is invalid: spec\.template\.spec\.domain/);
  });

  test('a migration without its VMI name is refused; a good one is allowed', () => {
    const good = { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstanceMigration', metadata: { name: 'm', namespace: 'default' }, spec: { vmiName: 'vm1' } };
    assert.deepEqual(validateMigrationAdmission(review(good)), { allowed: true });
    const result = validateMigrationAdmission(review({ ...good, spec: {} }));
    assert.ok(!result.allowed);
    assert.match(result.status.message, /spec\.vmiName/);
  });
});
