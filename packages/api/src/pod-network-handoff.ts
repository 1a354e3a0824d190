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
  /**
   * The address the guest gets over DHCP (the pod's for bridge, 10.0.2.2 for masquerade;
   * fd10:0:2::2 for masquerade on a pod without IPv4).
   */
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

/** One wired NIC: at least one of its two leases is there. */
export interface WiredNic {
  readonly attachment: NicAttachment;
  /** The guest's IPv4 side, served by the launcher's DHCP server; none where the pod has no IPv4. */
  readonly lease?: DhcpLease;
  /** The guest's IPv6 side (masquerade on a pod with IPv6), served by the launcher's DHCPv6 server. */
  readonly lease6?: DhcpV6Lease;
}

/** Under the launcher's `<private dir>/<vmi uid>/`; written whole (renamed into place) once every NIC is wired. */
export const POD_NETWORK_HANDOFF_FILE = 'pod-network.json';

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A handoff file that is not what the handler writes; the message names what is wrong. */
export class PodNetworkHandoffError extends Error {
  override readonly name = 'PodNetworkHandoffError';
  readonly code = 'API_ERR_POD_NETWORK_HANDOFF';
}

/** The handoff file's text → its NICs; throws PodNetworkHandoffError naming what is wrong with it. */
export function parsePodNetworkHandoff(text: string): WiredNic[] {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    throw new PodNetworkHandoffError(`the pod network handoff is not JSON: ${(err as Error).message}`, { cause: err });
  }
  if (!Array.isArray(data)) throw new PodNetworkHandoffError('the pod network handoff is not a list of NICs');
  return data.map((nic: unknown, i) => {
    if (!isObject(nic) || !isObject(nic['attachment']) || !(isObject(nic['lease']) || isObject(nic['lease6']))) throw new PodNetworkHandoffError(`pod network handoff entry ${i} lacks its attachment or a lease`);
    const { attachment, lease, lease6 } = nic;
    for (const key of ['ifaceName', 'tap', 'mac', 'guestIP', 'podInterfaceName']) {
      if (typeof attachment[key] !== 'string') throw new PodNetworkHandoffError(`pod network handoff entry ${i}: attachment.${key} is not a string`);
    }
    if (typeof attachment['mtu'] !== 'number') throw new PodNetworkHandoffError(`pod network handoff entry ${i}: attachment.mtu is not a number`);
    const check = (name: string, value: unknown, strings: readonly string[]): void => {
      if (value === undefined) return;
      if (!isObject(value)) throw new PodNetworkHandoffError(`pod network handoff entry ${i}: ${name} is not an object`);
      for (const key of strings) {
        if (typeof value[key] !== 'string') throw new PodNetworkHandoffError(`pod network handoff entry ${i}: ${name}.${key} is not a string`);
      }
      if (typeof value['prefix'] !== 'number') throw new PodNetworkHandoffError(`pod network handoff entry ${i}: ${name}.prefix is not a number`);
    };
    check('lease', lease, ['clientMac', 'clientIP', 'serverIP', 'hostname']);
    check('lease6', lease6, ['clientIP', 'gateway', 'serverIface', 'serverMac']);
    return nic as unknown as WiredNic;
  });
}
