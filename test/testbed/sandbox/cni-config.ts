/**
 * The testbed's CNI network as data: a CNI 1.0.0 conflist with the `bridge` plugin and
 * `host-local` IPAM. The bridge is not the pods' gateway in the plugin's sense (`isGateway`
 * would switch on the host's IPv4 forwarding); the kubelet puts the gateway address on the
 * bridge itself, so the host reaches every pod and nothing is routed beyond the bridge.
 */
export interface CniNetworkList {
  cniVersion: string;
  name: string;
  plugins: Array<Record<string, unknown> & { type: string }>;
}

/** A second range makes the network dual-stack: host-local hands out one address of each family. */
export interface Ipv6Range {
  readonly subnet: string;
  readonly gateway: string;
}

/**
 * `ipv6` adds the IPv6 range; `ipv4: false` (with `ipv6`) leaves the IPv4 one out: an IPv6-only
 * pod network.
 */
export function podNetworkConfig(opts: { name: string; bridge: string; subnet: string; gateway: string; ipamDir: string; mtu?: number; ipv6?: Ipv6Range; ipv4?: boolean }): CniNetworkList {
  const v6 = opts.ipv6;
  const v4 = opts.ipv4 !== false || v6 === undefined;
  return {
    cniVersion: '1.0.0',
    name: opts.name,
    plugins: [
      {
        type: 'bridge',
        bridge: opts.bridge,
        isGateway: false,
        ipMasq: false,
        hairpinMode: true,
        ...(opts.mtu === undefined ? {} : { mtu: opts.mtu }),
        ipam: {
          type: 'host-local',
          ranges: [...(v4 ? [[{ subnet: opts.subnet, gateway: opts.gateway }]] : []), ...(v6 === undefined ? [] : [[{ subnet: v6.subnet, gateway: v6.gateway }]])],
          routes: [...(v4 ? [{ dst: '0.0.0.0/0' }] : []), ...(v6 === undefined ? [] : [{ dst: '::/0' }])],
          dataDir: opts.ipamDir,
        },
      },
    ],
  };
}

/** The loopback network every sandbox gets on `lo`, as container runtimes add it. */
export function loopbackConfig(): CniNetworkList {
  return { cniVersion: '1.0.0', name: 'cni-loopback', plugins: [{ type: 'loopback' }] };
}
