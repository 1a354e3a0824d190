// What the node API's preconditions look at, from the VMI status and — fresher, since the
// status trails the launcher's stream — the last domain the launcher reported.

import { ConditionStatus, VmiConditionType, VmiPhase, type VirtualMachineInstance } from '@podvirt/api';
import type { cmd } from '@podvirt/proto';

export interface VmiFacts {
  readonly running: boolean;
  readonly paused: boolean;
  readonly agentConnected: boolean;
  readonly acpiEnabled: boolean;
  readonly frozen: boolean;
}

export function vmiFacts(vmi: VirtualMachineInstance, domain: cmd.Domain | undefined): VmiFacts {
  const condition = (type: string): boolean => vmi.status?.conditions?.some((c) => c.type === type && c.status === ConditionStatus.True) ?? false;
  const live = domain !== undefined && !domain.deleted;
  return {
    running: vmi.status?.phase === VmiPhase.Running,
    paused: live ? domain.state === 'Paused' : condition(VmiConditionType.Paused),
    agentConnected: live ? domain.agentConnected : condition(VmiConditionType.AgentConnected),
    // ACPI is on unless the spec turns it off, as KubeVirt defaults it.
    acpiEnabled: vmi.spec.domain.features?.acpi?.enabled !== false,
    frozen: live ? domain.fsFreezeStatus === 'frozen' : vmi.status?.fsFreezeStatus === 'frozen',
  };
}
