// The pod network's two phases, as KubeVirt splits them: the handler (privileged, in the launcher
// pod's network namespace) wires the tap, the in-pod bridge and the NAT, then leaves what it did
// in the launcher's private directory; the launcher (unprivileged) reads it, serves DHCP and
// attaches the tap to the domain. This file is the contract between the two.

/** What the domain and the status need to know about one guest NIC. */
export interface NicAttachment {
  readonly ifaceName: string;
  readonly binding: 'masquerade' | 'bridge';
  readonly tap: string;
  readonly mac: string;
  readonly mtu: number;
  /** The address the guest gets over DHCP (the pod's for bridge, 10.0.2.2 for masquerade). */
  readonly guestIP: string;
  /** What status.interfaces reports as ipAddress: the pod's IP for masquerade, the guest's for bridge. */
  readonly reportedIPs: readonly string[];
  readonly podInterfaceName: string;
}

/** What the one guest NIC behind a tap gets from the launcher's DHCP server. */
export interface DhcpLease {
  /** The only client answered (the guest NIC's MAC, lower case). */
  readonly clientMac: string;
  readonly clientIP: string;
  readonly prefix: number;
  /** The server's own address on the in-pod bridge (the source and server identifier). */
  readonly serverIP: string;
  readonly router?: string;
  readonly dnsServers: readonly string[];
  readonly searchDomains: readonly string[];
  readonly mtu: number;
  readonly hostname: string;
  /** Extra routes (option 121); a default route is added through `router` when set. */
  readonly routes?: ReadonlyArray<{ dst: string; prefix: number; gateway: string }>;
  /** The guest's IPv6 side (masquerade on a pod with IPv6), served by the launcher's DHCPv6 server. */
  readonly ipv6?: DhcpV6Lease;
}

/** What DHCPv6 hands the guest: one address (IA_NA); its default route goes through `gateway`. */
export interface DhcpV6Lease {
  readonly clientIP: string;
  readonly prefix: number;
  /** The in-pod bridge's address: DHCPv6's source and the guest's IPv6 default gateway. */
  readonly gateway: string;
  readonly dnsServers: readonly string[];
  /** Where the DHCPv6 server listens (the in-pod bridge) and the MAC its DUID is made of. */
  readonly serverIface: string;
  readonly serverMac: string;
}

export interface WiredNic {
  readonly attachment: NicAttachment;
  readonly lease: DhcpLease;
}

/** Under the launcher's `<private dir>/<vmi uid>/`; written whole (renamed into place) once every NIC is wired. */
export const POD_NETWORK_HANDOFF_FILE = 'pod-network.json';

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The handoff file's text → its NICs; throws a TypeError naming what is wrong with it. */
export function parsePodNetworkHandoff(text: string): WiredNic[] {
  const data: unknown = JSON.parse(text);
  if (!Array.isArray(data)) throw new TypeError('the pod network handoff is not a list of NICs');
  return data.map((nic: unknown, i) => {
    if (!isObject(nic) || !isObject(nic['attachment']) || !isObject(nic['lease'])) throw new TypeError(`pod network handoff entry ${i} lacks its attachment or lease`);
    const { attachment, lease } = nic;
    for (const key of ['ifaceName', 'tap', 'mac', 'guestIP', 'podInterfaceName']) {
      if (typeof attachment[key] !== 'string') throw new TypeError(`pod network handoff entry ${i}: attachment.${key} is not a string`);
    }
    for (const key of ['clientMac', 'clientIP', 'serverIP', 'hostname']) {
      if (typeof lease[key] !== 'string') throw new TypeError(`pod network handoff entry ${i}: lease.${key} is not a string`);
    }
    if (typeof attachment['mtu'] !== 'number' || typeof lease['prefix'] !== 'number') throw new TypeError(`pod network handoff entry ${i}: mtu or prefix is not a number`);
    return nic as unknown as WiredNic;
  });
}
