// VirtualMachines and the VMIs made from them, for the VM controller's table tests.

import { templateVmi, type RunStrategy, type VirtualMachine, type VirtualMachineInstance, type VmiStatus, type VmStatus } from '@podvirt/api';

export function vmFixture(options: { strategy?: RunStrategy; running?: boolean; status?: VmStatus; generation?: number; deleting?: boolean } = {}): VirtualMachine {
  return {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachine',
    metadata: {
      name: 'testvm',
      namespace: 'default',
      uid: 'vm-uid',
      resourceVersion: '3',
      generation: options.generation ?? 1,
      ...(options.deleting ? { deletionTimestamp: '2025-01-01T00:04:00Z' } : {}),
    },
    spec: {
      ...(options.running === undefined ? { runStrategy: options.strategy ?? 'Always' } : { running: options.running }),
      template: {
        metadata: { labels: { 'kubevirt.io/domain': 'testvm' } },
        spec: {
          domain: { devices: { disks: [{ name: 'containerdisk', disk: { bus: 'virtio' } }] }, resources: { requests: { memory: '128Mi' } } },
          volumes: [{ name: 'containerdisk', containerDisk: { image: 'guest:1' } }],
        },
      },
    },
    ...(options.status ? { status: options.status } : {}),
  };
}

/** The VMI the controller would have made for `vm`, in `phase`. */
export function vmVmi(vm: VirtualMachine, phase: string | undefined, extra: { uid?: string; ran?: boolean; deleting?: boolean; status?: VmiStatus } = {}): VirtualMachineInstance {
  const vmi = templateVmi(vm);
  vmi.metadata.uid = extra.uid ?? 'vmi-uid';
  vmi.metadata.annotations = { 'kubevirt.io/vm-generation': String(vm.metadata.generation ?? 1) };
  if (extra.deleting) vmi.metadata.deletionTimestamp = '2025-01-01T00:04:30Z';
  vmi.status = {
    ...(phase === undefined ? {} : { phase: phase as never }),
    ...(extra.ran ? { phaseTransitionTimestamps: [{ phase: 'Running', phaseTransitionTimestamp: '2025-01-01T00:01:00Z' }] } : {}),
    ...extra.status,
  };
  return vmi;
}
