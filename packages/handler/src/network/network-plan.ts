import { createHash } from 'node:crypto';
import type { DhcpLease, DhcpV6Lease, NicAttachment } from '@podvirt/api';
import { masqueradeRules } from './masquerade-rules.js';
import { renderRuleset } from './nft-ruleset.js';
import type { PodLink } from './pod-link.js';
import type { ResolverConfig } from './resolv-conf.js';

/**
 * One privileged change inside the pod's network namespace. Each can be applied again: `done`
 * is the `ip` error that says it already was (a handler that restarted half-way repeats it).
 */
export type SetupStep =
  | { readonly kind: 'ip'; readonly args: readonly string[]; readonly done?: string }
  | { readonly kind: 'sysctl'; readonly key: string; readonly value: string }
  | { readonly kind: 'nft'; readonly ruleset: string };

const EXISTS = 'File exists';

export interface NetworkPlan {
  readonly steps: readonly SetupStep[];
  readonly attachment: NicAttachment;
  /** DHCPv4; none for masquerade on a pod without IPv4. */
  readonly lease?: DhcpLease;
  /** DHCPv6: masquerade on a pod with IPv6. */
  readonly lease6?: DhcpV6Lease;
}

export interface PlanInput {
  readonly vmiUid: string;
  readonly hostname: string;
  readonly iface: {
    readonly name: string;
    readonly binding: 'masquerade' | 'bridge';
    readonly macAddress?: string;
    readonly ports?: ReadonlyArray<{ readonly protocol?: string; readonly port: number }>;
  };
  readonly link: PodLink;
  readonly resolver: ResolverConfig;
  /** KubeVirt's default VM network for masquerade. */
  readonly vmNetworkCIDR?: string;
  /** The launcher's user: the tap is theirs, so qemu opens it without CAP_NET_ADMIN. */
  readonly tapOwner?: { readonly uid: number; readonly gid: number };
}

export const TAP = 'tap0';
/** KubeVirt's VM network for IPv6 masquerade: the guest at ::2, the gateway at ::1. */
const VM_IPV6_CIDR = { gateway: 'fd10:0:2::1', guest: 'fd10:0:2::2', prefix: 120 };
const BRIDGE_FAKE_IP = '169.254.75.10';

export class NetworkPlanError extends Error {
  override readonly name = 'NetworkPlanError';
  readonly code = 'HANDLER_ERR_NETWORK_PLAN';
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

/** A MAC in libvirt's 52:54:00 range, stable for one VMI and interface. */
export function derivedMac(uid: string, iface: string): string {
  const h = createHash('sha256').update(`${uid}/${iface}`).digest();
  return ['52', '54', '00', ...[...h.subarray(0, 3)].map((b) => b.toString(16).padStart(2, '0'))].join(':');
}

/** The tap, owned by the launcher's user; a tap already there (held by qemu, or left by a first attempt) is kept. */
function tapStep(input: PlanInput): SetupStep {
  const owner = input.tapOwner === undefined ? [] : ['user', String(input.tapOwner.uid), 'group', String(input.tapOwner.gid)];
  return { kind: 'ip', args: ['tuntap', 'add', 'dev', TAP, 'mode', 'tap', ...owner], done: 'Device or resource busy' };
}

function bridgeName(podIface: string): string {
  return `k6t-${podIface}`;
}

/** Pure: the steps that wire one interface to the pod network, and the DHCP lease its guest NIC gets. */
export function planNetwork(input: PlanInput, ifaceIndex: number): NetworkPlan {
  return input.iface.binding === 'masquerade' ? planMasquerade(input) : planBridge(input, ifaceIndex);
}

/**
 * Masquerade, per family the pod has, as KubeVirt sets it up: IPv4 puts the gateway 10.0.2.1 on
 * the in-pod bridge and the guest at 10.0.2.2 behind NAT (DHCPv4); IPv6 puts fd10:0:2::1/120
 * there and the guest at fd10:0:2::2 behind NAT66 (DHCPv6). A dual-stack pod gets both, an
 * IPv6-only pod the IPv6 side alone.
 */
function planMasquerade(input: PlanInput): NetworkPlan {
  const { link } = input;
  if (link.ipv4 === undefined && link.ipv6 === undefined) throw new NetworkPlanError('spec.networks', `the pod interface ${link.name} has no global IPv4 or IPv6 address to masquerade behind`);
  const bridge = bridgeName(link.name);
  const bridgeMac = '02:00:00:00:00:00';
  const mac = (input.iface.macAddress ?? derivedMac(input.vmiUid, input.iface.name)).toLowerCase();
  const ports = (input.iface.ports ?? []).map((p) => ({ protocol: (p.protocol ?? 'TCP').toLowerCase() as 'tcp' | 'udp', port: p.port }));
  const v4 = link.ipv4 === undefined ? undefined : vmIPv4Network(input.vmNetworkCIDR ?? '10.0.2.0/24');
  const v6 = link.ipv6 === undefined ? undefined : VM_IPV6_CIDR;
  const ruleset = renderRuleset([
    ...(v4 === undefined ? [] : [masqueradeRules({ family: 'ip', podIface: link.name, bridge, guestIP: v4.guest, gatewayIP: v4.gateway, ports })]),
    ...(v6 === undefined ? [] : [masqueradeRules({ family: 'ip6', podIface: link.name, bridge, guestIP: v6.guest, gatewayIP: v6.gateway, ports })]),
  ]);
  const v4Steps: SetupStep[] =
    v4 === undefined
      ? []
      : [
          { kind: 'ip', args: ['addr', 'replace', `${v4.gateway}/${v4.prefix}`, 'dev', bridge] },
          // DHCP replies are broadcast before the guest has an address; they must leave through the bridge.
          { kind: 'ip', args: ['route', 'replace', '255.255.255.255/32', 'dev', bridge] },
          { kind: 'sysctl', key: 'net/ipv4/ip_forward', value: '1' },
          // Connections to the pod's loopback are DNATed to the guest; their replies must be routable.
          { kind: 'sysctl', key: `net/ipv4/conf/${bridge}/route_localnet`, value: '1' },
        ];
  // `nodad`: the gateway answers at once; IPv6 forwarding has only the `all` switch that counts.
  const v6Steps: SetupStep[] =
    v6 === undefined
      ? []
      : [
          { kind: 'sysctl', key: `net/ipv6/conf/${bridge}/disable_ipv6`, value: '0' },
          { kind: 'ip', args: ['-6', 'addr', 'replace', `${v6.gateway}/${v6.prefix}`, 'dev', bridge, 'nodad'] },
          { kind: 'sysctl', key: 'net/ipv6/conf/all/forwarding', value: '1' },
        ];
  const steps: SetupStep[] = [
    { kind: 'ip', args: ['link', 'add', bridge, 'type', 'bridge'], done: EXISTS },
    { kind: 'ip', args: ['link', 'set', bridge, 'address', bridgeMac, 'mtu', String(link.mtu)] },
    { kind: 'ip', args: ['link', 'set', bridge, 'up'] },
    tapStep(input),
    { kind: 'ip', args: ['link', 'set', TAP, 'mtu', String(link.mtu), 'master', bridge, 'up'] },
    ...v4Steps,
    ...v6Steps,
    { kind: 'nft', ruleset },
  ];
  const reportedIPs = [...(link.ipv4 === undefined ? [] : [link.ipv4.address]), ...(link.ipv6 === undefined ? [] : [link.ipv6.address])];
  return {
    steps,
    attachment: { ifaceName: input.iface.name, binding: 'masquerade', tap: TAP, mac, mtu: link.mtu, guestIP: v4?.guest ?? v6?.guest ?? '', reportedIPs, podInterfaceName: link.name },
    ...(v4 === undefined
      ? {}
      : {
          lease: {
            clientMac: mac,
            clientIP: v4.guest,
            prefix: v4.prefix,
            serverIP: v4.gateway,
            router: v4.gateway,
            dnsServers: input.resolver.nameservers,
            searchDomains: input.resolver.searchDomains,
            mtu: link.mtu,
            hostname: input.hostname,
          },
        }),
    ...(v6 === undefined ? {} : { lease6: { clientIP: v6.guest, prefix: v6.prefix, gateway: v6.gateway, dnsServers: input.resolver.nameservers6 ?? [], serverIface: bridge, serverMac: bridgeMac } }),
  };
}

/** The gateway (first host) and the guest (second host) of the masquerade VM network. */
function vmIPv4Network(cidr: string): { gateway: string; guest: string; prefix: number } {
  const m = /^(\d+)\.(\d+)\.(\d+)\.(\d+)\/(\d+)$/.exec(cidr);
  const prefix = Number(m?.[5]);
  if (m === null || prefix > 30) throw new NetworkPlanError('spec.networks.pod.vmNetworkCIDR', `${JSON.stringify(cidr)} is not an IPv4 CIDR with room for a gateway and a guest`);
  const base = `${m[1] ?? 0}.${m[2] ?? 0}.${m[3] ?? 0}`;
  const last = Number(m[4]);
  return { gateway: `${base}.${last + 1}`, guest: `${base}.${last + 2}`, prefix };
}

function planBridge(input: PlanInput, ifaceIndex: number): NetworkPlan {
  const { link } = input;
  if (link.ipv4 === undefined) throw new NetworkPlanError(`spec.domain.devices.interfaces[${ifaceIndex}].bridge`, `the pod interface ${link.name} has no IPv4 address to hand to the guest; bridge binding needs one`);
  const bridge = bridgeName(link.name);
  const nic = `${link.name}-nic`;
  // The guest takes over the pod's address and MAC; the renamed pod link gets a MAC of its own.
  const mac = (input.iface.macAddress ?? link.mac).toLowerCase();
  // `ip` says `Cannot find device "eth0"` or `Device "eth0" does not exist.` depending on the call.
  const renamed = `"${link.name}"`;
  const nicMac = derivedMac(input.vmiUid, `${input.iface.name}/pod-link`).replace(/^52:54:00/, '02:00:00');
  const steps: SetupStep[] = [
    { kind: 'ip', args: ['link', 'add', bridge, 'type', 'bridge'], done: EXISTS },
    { kind: 'ip', args: ['link', 'set', bridge, 'mtu', String(link.mtu), 'up'] },
    { kind: 'ip', args: ['addr', 'replace', `${BRIDGE_FAKE_IP}/32`, 'dev', bridge] },
    // Once renamed, the pod link is gone by its first name: these three are done then.
    { kind: 'ip', args: ['addr', 'flush', 'dev', link.name], done: renamed },
    { kind: 'ip', args: ['link', 'set', link.name, 'down'], done: renamed },
    { kind: 'ip', args: ['link', 'set', link.name, 'name', nic, 'address', nicMac], done: renamed },
    { kind: 'ip', args: ['link', 'set', nic, 'master', bridge, 'up'] },
    // The guest's own frames can come back through the pod link (a hairpinning node bridge); were
    // the in-pod bridge to learn the guest's MAC there, it would stop delivering to the tap.
    { kind: 'ip', args: ['link', 'set', nic, 'type', 'bridge_slave', 'learning', 'off'] },
    tapStep(input),
    { kind: 'ip', args: ['link', 'set', TAP, 'mtu', String(link.mtu), 'master', bridge, 'up'] },
    { kind: 'ip', args: ['route', 'replace', '255.255.255.255/32', 'dev', bridge] },
    { kind: 'sysctl', key: 'net/ipv4/conf/all/arp_ignore', value: '1' },
  ];
  return {
    steps,
    attachment: { ifaceName: input.iface.name, binding: 'bridge', tap: TAP, mac, mtu: link.mtu, guestIP: link.ipv4.address, reportedIPs: [link.ipv4.address], podInterfaceName: link.name },
    lease: {
      clientMac: mac,
      clientIP: link.ipv4.address,
      prefix: link.ipv4.prefix,
      serverIP: BRIDGE_FAKE_IP,
      ...(link.gateway === undefined ? {} : { router: link.gateway }),
      dnsServers: input.resolver.nameservers,
      searchDomains: input.resolver.searchDomains,
      mtu: link.mtu,
      hostname: input.hostname,
    },
  };
}
