// What the node API's preconditions look at, from the VMI status and — fresher, since the
// status trails the launcher's stream — the last domain the launcher reported; the spec's
// settings from the VMI as the decode path defaulted it.

import { ConditionStatus, VmiConditionType, VmiPhase, type DefaultedVmi, type VirtualMachineInstance } from '@podvirt/api';
import type { cmd } from '@podvirt/proto';

export interface VmiFacts {
  readonly running: boolean;
  readonly paused: boolean;
  readonly agentConnected: boolean;
  readonly acpiEnabled: boolean;
  readonly frozen: boolean;
}

/** `decoded`: the VMI's spec as `DefaultedVmis` gives it (undefined: it does not decode, so nothing of its spec is known to be on). */
export function vmiFacts(vmi: VirtualMachineInstance, domain: cmd.Domain | undefined, decoded?: DefaultedVmi): VmiFacts {
  const condition = (type: string): boolean => vmi.status?.conditions?.some((c) => c.type === type && c.status === ConditionStatus.True) ?? false;
  const live = domain !== undefined && !domain.deleted;
  return {
    running: vmi.status?.phase === VmiPhase.Running,
    paused: live ? domain.state === 'Paused' : condition(VmiConditionType.Paused),
    agentConnected: live ? domain.agentConnected : condition(VmiConditionType.AgentConnected),
    acpiEnabled: decoded?.spec.domain.features.acpi.enabled === true,
    frozen: live ? domain.fsFreezeStatus === 'frozen' : vmi.status?.fsFreezeStatus === 'frozen',
  };
}
