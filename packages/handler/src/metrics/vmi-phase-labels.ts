// The label set of kubevirt_vmi_phase_count, as KubeVirt reports it: the phase in lower case
// (dashboards and the SSP recording rules match phase="running"), os, workload and flavor from
// the common-templates annotations, instance type and preference from the annotations the VM
// controller stamps, and KubeVirt's "<none>" where a VMI carries none of them.

import type { VirtualMachineInstance } from '@podvirt/api';

export const PHASE_COUNT_LABELS = ['node', 'phase', 'os', 'workload', 'flavor', 'instance_type', 'preference'] as const;

export type PhaseCountLabels = Record<(typeof PHASE_COUNT_LABELS)[number], string>;

export const NONE = '<none>';

const OS = 'vm.kubevirt.io/os';
const WORKLOAD = 'vm.kubevirt.io/workload';
const FLAVOR = 'vm.kubevirt.io/flavor';
const INSTANCE_TYPES = ['kubevirt.io/instancetype-name', 'kubevirt.io/cluster-instancetype-name'];
const PREFERENCES = ['kubevirt.io/preference-name', 'kubevirt.io/cluster-preference-name'];

export function phaseCountLabels(vmi: VirtualMachineInstance, node: string): PhaseCountLabels {
  const annotations = vmi.metadata.annotations ?? {};
  const first = (keys: readonly string[]): string => keys.map((k) => annotations[k]).find((v) => v !== undefined && v !== '') ?? NONE;
  return {
    node,
    phase: (vmi.status?.phase ?? '').toLowerCase(),
    os: first([OS]),
    workload: first([WORKLOAD]),
    flavor: first([FLAVOR]),
    instance_type: first(INSTANCE_TYPES),
    preference: first(PREFERENCES),
  };
}
