import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { formatFieldErrors, runStrategyOf, templateVmi, validateVm, type VirtualMachine } from '../src/index.js';

// A VM as KubeVirt's user guide writes one (with memory podvirt's guests boot in).
function userGuideVm(): Record<string, unknown> {
  return {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachine',
    metadata: { name: 'testvm', namespace: 'default', uid: 'vm-uid' },
    spec: {
      runStrategy: 'Halted',
      template: {
        metadata: { labels: { 'kubevirt.io/size': 'small', 'kubevirt.io/domain': 'testvm' } },
        spec: {
          domain: {
            devices: {
              disks: [{ name: 'containerdisk', disk: { bus: 'virtio' } }, { name: 'cloudinitdisk', disk: { bus: 'virtio' } }],
              interfaces: [{ name: 'default', masquerade: {} }],
            },
            resources: { requests: { memory: '128Mi' } },
          },
          networks: [{ name: 'default', pod: {} }],
          volumes: [
            { name: 'containerdisk', containerDisk: { image: 'quay.io/kubevirt/cirros-container-disk-demo' } },
            { name: 'cloudinitdisk', cloudInitNoCloud: { userDataBase64: 'SGkuXG4=' } },
          ],
        },
      },
    },
  };
}

function withSpec(patch: Record<string, unknown>): Record<string, unknown> {
  const vm = userGuideVm();
  return { ...vm, spec: { ...(vm['spec'] as Record<string, unknown>), ...patch } };
}

describe('validateVm', () => {
  test("the user guide's VM is valid", () => {
    assert.deepEqual(validateVm(userGuideVm()), []);
  });

  test('running and runStrategy together are refused, naming spec.running', () => {
    const errors = validateVm(withSpec({ running: true }));
    assert.deepEqual(errors.map((e) => `${e.field} ${e.type}`), ['spec.running Invalid']);
  });

  test('an unknown strategy is named with the values accepted', () => {
    const errors = validateVm(withSpec({ runStrategy: 'Sometimes' }));
    assert.equal(errors.length, 1);
    assert.match(formatFieldErrors(errors), /^spec\.runStrategy: Unsupported value: the string "Sometimes": supported values: "Always", "RerunOnFailure", "Manual", "Halted", "Once"$/);
  });

  test('the template goes through the VMI decode path, its errors named under spec.template', () => {
    const vm = userGuideVm();
    const template = (vm['spec'] as { template: { spec: { domain: { resources: unknown } } } }).template;
    template.spec.domain.resources = { requests: { memory: 'lots' } };
    const errors = validateVm(vm);
    assert.ok(errors.length > 0);
    assert.ok(errors.every((e) => e.field.startsWith('spec.template.spec.domain.resources')), formatFieldErrors(errors));
  });

  test('a missing template, an unsupported VM field and template metadata are named', () => {
    assert.deepEqual(validateVm(withSpec({ template: undefined })).map((e) => e.field), ['spec.template']);
    assert.deepEqual(validateVm(withSpec({ dataVolumeTemplates: [] })).map((e) => `${e.field} ${e.type}`), ['spec.dataVolumeTemplates NotSupported']);
    const vm = userGuideVm();
    (vm['spec'] as { template: { metadata: Record<string, unknown> } }).template.metadata['finalizers'] = ['x'];
    assert.deepEqual(validateVm(vm).map((e) => e.field), ['spec.template.metadata.finalizers']);
  });

  test('what podvirt does not run is refused by name: instance types, preferences, a paused start', () => {
    assert.deepEqual(
      validateVm(withSpec({ instancetype: { name: 'u1.small' }, preference: { name: 'fedora' } })).map((e) => `${e.field} ${e.type}`),
      ['spec.instancetype NotSupported', 'spec.preference NotSupported'],
    );
    const vm = userGuideVm();
    (vm['spec'] as { template: { spec: Record<string, unknown> } }).template.spec['startStrategy'] = 'Paused';
    assert.deepEqual(validateVm(vm).map((e) => e.field), ['spec.template.spec.startStrategy']);
  });

  test('runStrategyOf: runStrategy, else running true/false as Always/Halted, else Halted', () => {
    const vm = userGuideVm() as unknown as VirtualMachine;
    assert.equal(runStrategyOf(vm), 'Halted');
    assert.equal(runStrategyOf({ ...vm, spec: { template: vm.spec.template, running: true } }), 'Always');
    assert.equal(runStrategyOf({ ...vm, spec: { template: vm.spec.template, running: false } }), 'Halted');
    assert.equal(runStrategyOf({ ...vm, spec: { template: vm.spec.template } }), 'Halted');
  });

  test('templateVmi: the VM name, the template labels plus kubevirt.io/vm, the VM as controlling owner, its finalizer', () => {
    const vmi = templateVmi(userGuideVm() as unknown as VirtualMachine);
    assert.equal(vmi.metadata.name, 'testvm');
    assert.deepEqual(vmi.metadata.labels, { 'kubevirt.io/size': 'small', 'kubevirt.io/domain': 'testvm', 'kubevirt.io/vm': 'testvm' });
    assert.equal(vmi.metadata.ownerReferences?.[0]?.controller, true);
    assert.equal(vmi.metadata.ownerReferences?.[0]?.uid, 'vm-uid');
    assert.deepEqual(vmi.metadata.finalizers, ['kubevirt.io/virtualMachineControllerFinalize'], 'KubeVirt\'s VM controller finalizer');
  });
});
