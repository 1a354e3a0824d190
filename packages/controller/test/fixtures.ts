// VMIs and launcher pods for the table tests.

import type { V1Pod } from '@kubernetes/client-node';
import type { VirtualMachineInstance, VmiStatus } from '@podvirt/api';

export function vmiFixture(overrides: { status?: VmiStatus; metadata?: Partial<VirtualMachineInstance['metadata']> } = {}): VirtualMachineInstance {
  return {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachineInstance',
    metadata: { name: 'testvmi', namespace: 'default', uid: 'vmi-uid', resourceVersion: '7', finalizers: ['foregroundDeleteVirtualMachine'], ...overrides.metadata },
    spec: {
      domain: { devices: { disks: [{ name: 'containerdisk', disk: { bus: 'virtio' } }] }, resources: { requests: { memory: '128Mi' } } },
      volumes: [{ name: 'containerdisk', containerDisk: { image: 'guest:1' } }],
    },
    ...(overrides.status ? { status: overrides.status } : {}),
  };
}

export interface PodShape {
  name?: string;
  uid?: string;
  node?: string;
  phase?: string;
  ready?: boolean;
  terminating?: boolean;
  qosClass?: string;
  computeFinishedAt?: string;
  created?: string;
}

export function launcherPod(shape: PodShape = {}): V1Pod {
  const phase = shape.phase ?? 'Pending';
  return {
    metadata: {
      name: shape.name ?? 'virt-launcher-testvmi-abcde',
      namespace: 'default',
      uid: shape.uid ?? 'pod-uid',
      creationTimestamp: new Date(shape.created ?? '2025-01-01T00:00:00Z'),
      labels: { 'kubevirt.io': 'virt-launcher', 'kubevirt.io/created-by': 'vmi-uid' },
      ownerReferences: [{ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', name: 'testvmi', uid: 'vmi-uid', controller: true }],
      ...(shape.terminating ? { deletionTimestamp: new Date('2025-01-01T00:10:00Z') } : {}),
    },
    spec: {
      containers: [{ name: 'compute', image: 'podvirt/launcher:0.1.0' }],
      ...(shape.node ? { nodeName: shape.node } : {}),
    },
    status: {
      phase,
      ...(shape.qosClass ? { qosClass: shape.qosClass } : {}),
      conditions: [{ type: 'Ready', status: shape.ready ? 'True' : 'False', lastTransitionTime: new Date('2025-01-01T00:01:00Z') }],
      ...(shape.computeFinishedAt
        ? { containerStatuses: [{ name: 'compute', image: 'x', imageID: '', ready: false, restartCount: 0, state: { terminated: { exitCode: 0, finishedAt: shape.computeFinishedAt as unknown as Date } } }] }
        : {}),
    },
  };
}
