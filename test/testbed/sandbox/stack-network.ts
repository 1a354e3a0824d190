import { createHash } from 'node:crypto';
import { join } from 'node:path';

/**
 * What one testbed stack's pod network is called and where its CNI state lives, derived from
 * the stack's id so that stacks running side by side on one machine never share a bridge,
 * a subnet, a namespace name or an IPAM directory.
 */
export interface StackNetwork {
  readonly id: string;
  /** Linux bridge the pods' veths hang on (≤ 15 characters). */
  readonly bridge: string;
  /** CNI network name, also host-local's subdirectory. */
  readonly networkName: string;
  /** Prefix of every pod network namespace's name under /run/netns. */
  readonly netnsPrefix: string;
  /** The testbed-owned CNI config directory (net.d) and host-local's data directory. */
  readonly confDir: string;
  readonly ipamDir: string;
  readonly cniPath: string;
}

/** Pod subnets are /24s out of 10.200.0.0/13: private, and nothing on these machines routes it. */
export const subnetPoolBase = [10, 200] as const;
export const subnetPoolSize = 2048;

export function stackNetwork(rootDir: string, cniPath = '/usr/lib/cni'): StackNetwork {
  const id = createHash('sha256').update(rootDir).digest('hex').slice(0, 8);
  return {
    id,
    bridge: `pvbr-${id}`,
    networkName: `podvirt-${id}`,
    netnsPrefix: `podvirt-${id}-`,
    confDir: join(rootDir, 'cni', 'net.d'),
    ipamDir: join(rootDir, 'cni', 'ipam'),
    cniPath,
  };
}

/**
 * The stack's IPv6 /64 for a dual-stack testbed, tied to its IPv4 /24 (candidate `n` of the pool
 * gives fd70:6f64:7669:<n>::/64), so the claim on the /24 also settles the /64. A ULA prefix:
 * private by definition, and nothing on these machines routes it.
 */
export const ipv6PoolPrefix = 'fd70:6f64:7669';

export function ipv6Range(subnet: string): { subnet: string; gateway: string } {
  const [, second, third] = subnet.split('.').map(Number);
  const n = (((second ?? subnetPoolBase[1]) - subnetPoolBase[1]) << 8) + (third ?? 0);
  // Written as `ip` prints it: a zero fourth group folds into the `::`.
  const block = n === 0 ? `${ipv6PoolPrefix}:` : `${ipv6PoolPrefix}:${n.toString(16)}:`;
  return { subnet: `${block}:/64`, gateway: `${block}:1` };
}

/** The /24 tried first for a stack, then the following ones (wrapping) while a candidate is taken. */
export function subnetCandidate(id: string, attempt: number): { subnet: string; gateway: string } {
  const n = (parseInt(id.slice(0, 4), 16) + attempt) % subnetPoolSize;
  const second = subnetPoolBase[1] + (n >> 8);
  const third = n & 255;
  return { subnet: `${subnetPoolBase[0]}.${second}.${third}.0/24`, gateway: `${subnetPoolBase[0]}.${second}.${third}.1` };
}
