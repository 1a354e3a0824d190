// The VMI status fields copied from the domain: guest OS, interfaces as the agent sees them,
// the machine type qemu really runs, and the filesystem freeze state.

import type { GuestOsInfo, VirtualMachineInstance, VmiNetworkInterfaceStatus, VmiStatus } from '@podvirt/api';
import type { cmd } from '@podvirt/proto';

export function applyDomainFields(status: VmiStatus, vmi: VirtualMachineInstance, domain: cmd.Domain): void {
  if (domain.osInfo !== undefined) status.guestOSInfo = guestOsInfo(domain.osInfo);
  if (domain.interfaces.length > 0) status.interfaces = interfaces(vmi, domain.interfaces);
  if (domain.machine !== '') status.machine = { type: domain.machine };
  if (domain.fsFreezeStatus === 'frozen') status.fsFreezeStatus = 'frozen';
  else delete status.fsFreezeStatus;
}

function guestOsInfo(os: cmd.GuestOsInfo): GuestOsInfo {
  const out: GuestOsInfo = {};
  for (const [k, v] of Object.entries(os) as Array<[keyof GuestOsInfo, string]>) if (v !== '') out[k] = v;
  return out;
}

/** The agent's view; an interface whose MAC the VMI spec names gets the spec's name. */
function interfaces(vmi: VirtualMachineInstance, reported: readonly cmd.GuestInterface[]): VmiNetworkInterfaceStatus[] {
  const byMac = new Map<string, string>();
  for (const iface of vmi.spec.domain.devices?.interfaces ?? []) {
    if (iface.macAddress !== undefined) byMac.set(iface.macAddress.toLowerCase(), iface.name);
  }
  return reported
    .filter((i) => i.name !== 'lo')
    .map((i) => {
      const name = byMac.get(i.mac.toLowerCase());
      const [first] = i.ipAddresses;
      return {
        ...(name === undefined ? {} : { name }),
        ...(i.mac === '' ? {} : { mac: i.mac }),
        ...(first === undefined ? {} : { ipAddress: first, ipAddresses: [...i.ipAddresses] }),
        interfaceName: i.name,
        infoSource: 'guest-agent',
      };
    });
}
