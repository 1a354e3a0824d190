/** The pod interface as the network set-up finds it before touching anything. */
export interface PodLink {
  readonly name: string;
  readonly mac: string;
  readonly mtu: number;
  readonly ipv4?: { readonly address: string; readonly prefix: number };
  readonly hasIPv6: boolean;
  /** The first global IPv6 address, when there is one. */
  readonly ipv6?: { readonly address: string; readonly prefix: number };
  /** The IPv4 default route's gateway, when there is one. */
  readonly gateway?: string;
}

interface IpAddrJson {
  ifname?: string;
  mtu?: number;
  address?: string;
  addr_info?: Array<{ family?: string; local?: string; prefixlen?: number; scope?: string }>;
}

/** From `ip -j addr show dev <name>` and `ip -j -4 route show default` output. */
export function parsePodLink(addrJson: string, routeJson: string): PodLink | undefined {
  const link = (JSON.parse(addrJson) as IpAddrJson[])[0];
  if (link?.ifname === undefined) return undefined;
  const v4 = link.addr_info?.find((a) => a.family === 'inet' && a.scope === 'global');
  const v6addr = link.addr_info?.find((a) => a.family === 'inet6' && a.scope === 'global');
  const routes = JSON.parse(routeJson || '[]') as Array<{ dst?: string; gateway?: string; dev?: string }>;
  const gateway = routes.find((r) => r.dst === 'default' && r.dev === link.ifname)?.gateway;
  return {
    name: link.ifname,
    mac: (link.address ?? '').toLowerCase(),
    mtu: link.mtu ?? 1500,
    ...(v4?.local === undefined ? {} : { ipv4: { address: v4.local, prefix: v4.prefixlen ?? 32 } }),
    hasIPv6: v6addr !== undefined,
    ...(v6addr?.local === undefined ? {} : { ipv6: { address: v6addr.local, prefix: v6addr.prefixlen ?? 128 } }),
    ...(gateway === undefined ? {} : { gateway }),
  };
}
