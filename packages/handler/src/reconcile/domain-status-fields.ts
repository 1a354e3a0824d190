// The VMI status fields copied from the domain: guest OS, interfaces (domain + guest agent),
// the machine type qemu really runs, and the filesystem freeze state.

import type { GuestOsInfo, VirtualMachineInstance, VmiStatus } from '@podvirt/api';
import type { cmd } from '@podvirt/proto';
import { interfaceStatus } from './interface-status.js';

export function applyDomainFields(status: VmiStatus, vmi: VirtualMachineInstance, domain: cmd.Domain): void {
  if (domain.osInfo !== undefined) status.guestOSInfo = guestOsInfo(domain.osInfo);
  if (domain.interfaces.length > 0 || domain.domainInterfaces.length > 0) status.interfaces = interfaceStatus(vmi, domain.domainInterfaces, domain.interfaces);
  if (domain.machine !== '') status.machine = { type: domain.machine };
  if (domain.fsFreezeStatus === 'frozen') status.fsFreezeStatus = 'frozen';
  else delete status.fsFreezeStatus;
}

function guestOsInfo(os: cmd.GuestOsInfo): GuestOsInfo {
  const out: GuestOsInfo = {};
  for (const [k, v] of Object.entries(os) as Array<[keyof GuestOsInfo, string]>) if (v !== '') out[k] = v;
  return out;
}
