// One row of the node API's List: the VMI as the handler sees it, domain included.

import type { VirtualMachineInstance } from '@podvirt/api';
import type { cmd, node } from '@podvirt/proto';
import { vmiFacts } from './vmi-facts.js';

export function vmiSummary(vmi: VirtualMachineInstance, domain: cmd.Domain | undefined): node.VmiSummary {
  const facts = vmiFacts(vmi, domain);
  const live = domain !== undefined && !domain.deleted;
  return {
    namespace: vmi.metadata.namespace ?? '',
    name: vmi.metadata.name ?? '',
    uid: vmi.metadata.uid ?? '',
    phase: vmi.status?.phase ?? '',
    nodeName: vmi.status?.nodeName ?? '',
    domainState: live ? domain.state : '',
    domainReason: live ? domain.reason : '',
    paused: facts.paused,
    agentConnected: facts.agentConnected,
    fsFreezeStatus: facts.frozen ? 'frozen' : '',
  };
}
