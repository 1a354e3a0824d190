// status.interfaces as KubeVirt builds it: the domain's NICs first (name, MAC, the pod's IPs
// from the launcher's network set-up, queue count), then the guest agent's view merged in by
// MAC, then interfaces only the guest knows (at most ten); the pod network's NIC comes first.

import type { VirtualMachineInstance, VmiNetworkInterfaceStatus } from '@podvirt/api';
import type { cmd } from '@podvirt/proto';

const GUEST_ONLY_LIMIT = 10;

const isV4 = (ip: string): boolean => /^\d+\.\d+\.\d+\.\d+$/.test(ip);

/** Where both know addresses of one family, the domain's (pod) addresses win, as in KubeVirt. */
function mergeIPs(domainIPs: readonly string[], agentIPs: readonly string[]): string[] {
  const pick = (test: (ip: string) => boolean): string[] => {
    const d = domainIPs.filter(test);
    const a = agentIPs.filter(test);
    return d.length === 0 || a.length === 0 ? a : d;
  };
  return [...pick(isV4), ...pick((ip) => !isV4(ip) && ip.includes(':'))];
}

export function interfaceStatus(vmi: VirtualMachineInstance, domainIfaces: readonly cmd.DomainInterface[], agentIfaces: readonly cmd.GuestInterface[]): VmiNetworkInterfaceStatus[] {
  const specByName = new Map((vmi.spec.domain.devices?.interfaces ?? []).map((i) => [i.name, i]));
  const out: VmiNetworkInterfaceStatus[] = domainIfaces.map((d) => ({
    name: d.name,
    mac: d.mac,
    ...(d.ipAddresses[0] === undefined ? {} : { ipAddress: d.ipAddresses[0], ipAddresses: [...d.ipAddresses] }),
    infoSource: 'domain',
    queueCount: d.queueCount === 0 ? 1 : d.queueCount,
    ...(d.podInterfaceName === '' ? {} : { podInterfaceName: d.podInterfaceName }),
  }));
  let guestOnly = 0;
  for (const a of agentIfaces) {
    if (a.name === 'lo') continue;
    const known = a.mac === '' ? undefined : out.find((s) => s.mac?.toLowerCase() === a.mac.toLowerCase());
    if (known !== undefined) {
      const masquerade = specByName.get(known.name ?? '')?.masquerade !== undefined;
      // Link-local IPv6 addresses of a masqueraded guest mean nothing outside it.
      const agentIPs = masquerade ? a.ipAddresses.filter((ip) => !/^fe80:/i.test(ip)) : a.ipAddresses;
      const ips = mergeIPs(known.ipAddresses ?? [], agentIPs);
      known.interfaceName = a.name;
      delete known.ipAddress;
      delete known.ipAddresses;
      if (ips[0] !== undefined) Object.assign(known, { ipAddress: ips[0], ipAddresses: ips });
      known.infoSource = 'domain, guest-agent';
      continue;
    }
    if (guestOnly >= GUEST_ONLY_LIMIT) continue;
    guestOnly += 1;
    // A launcher that reports no domain NICs: the spec's macAddress still names the interface.
    const named = [...specByName.values()].find((i) => i.macAddress !== undefined && i.macAddress.toLowerCase() === a.mac.toLowerCase())?.name;
    out.push({
      ...(named === undefined ? {} : { name: named }),
      ...(a.mac === '' ? {} : { mac: a.mac }),
      ...(a.ipAddresses[0] === undefined ? {} : { ipAddress: a.ipAddresses[0], ipAddresses: [...a.ipAddresses] }),
      interfaceName: a.name,
      infoSource: 'guest-agent',
    });
  }
  const primary = vmi.spec.networks?.find((n) => n.pod !== undefined)?.name;
  const at = out.findIndex((s) => s.name !== undefined && s.name === primary);
  if (at > 0) out.unshift(...out.splice(at, 1));
  return out;
}
