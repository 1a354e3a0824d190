import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { cniAdd, cniDel, type CniResult } from './cni-exec.js';
import { loopbackConfig, podNetworkConfig, type CniNetworkList } from './cni-config.js';
import { addNetns, deleteNetns, netnsDir } from './netns.js';
import { runCommand } from './run-command.js';
import { SandboxError } from './sandbox-error.js';
import { ipv6Range, stackNetwork, subnetCandidate, subnetPoolSize, type StackNetwork } from './stack-network.js';

/** A pod's sandbox: its network namespace and the addresses CNI gave it. */
export interface PodSandbox {
  readonly netnsName: string;
  readonly netnsPath: string;
  /** The pod's IPs (no prefix length), IPv4 first. */
  readonly podIPs: readonly string[];
}

const confFile = '10-podvirt.conflist';

/**
 * The testbed's pod network: the stack's bridge (with the gateway address, so the host reaches
 * every pod), its net.d and host-local's state, and one sandbox per pod made by real CNI
 * plugins. `close()` removes the bridge and every sandbox it still knows of.
 */
export class PodNetwork {
  readonly stack: StackNetwork;
  readonly #log: Logger;
  readonly #sandboxes = new Map<string, { sandbox: PodSandbox; result: CniResult }>();
  /** `ipv4` (the default), `dual` (also IPv6) or `ipv6` (IPv6 only). */
  readonly #families: PodIPFamilies;
  #subnet = '';
  #gateway = '';
  #subnet6 = '';

  /**
   * `ipv6` (default: PODVIRT_TESTBED_IPV6 in the environment) adds IPv6: `true` (`=1`) makes the
   * network dual-stack, every pod also getting an address from the stack's ULA /64 whose gateway
   * sits on the bridge; `'only'` (`=only`) gives the pods that IPv6 address alone. The bridge
   * keeps the stack's IPv4 gateway either way: the claim on the /24 is what settles the /64.
   */
  constructor(opts: { rootDir: string; log: Logger; cniPath?: string; ipv6?: boolean | 'only' }) {
    this.stack = stackNetwork(opts.rootDir, opts.cniPath);
    this.#families = podIPFamilies(opts.ipv6 ?? process.env['PODVIRT_TESTBED_IPV6']);
    this.#log = opts.log.child({ component: 'pod-network', bridge: this.stack.bridge });
  }

  get subnet(): string {
    return this.#subnet;
  }

  /** The bridge's IPv4 address in the stack's /24 (the pods' gateway; the host's side of the network). */
  get gateway(): string {
    return this.#gateway;
  }

  /** The stack's IPv6 /64 when dual-stack, else ''. */
  get subnet6(): string {
    return this.#subnet6;
  }

  /** Makes the bridge, claims a free /24 for it, and writes the conflist into the stack's net.d. */
  async start(): Promise<void> {
    await this.#removeLeftovers();
    const s = this.stack;
    await ip(['link', 'add', s.bridge, 'type', 'bridge']);
    for (let attempt = 0; attempt < subnetPoolSize; attempt++) {
      const { subnet, gateway } = subnetCandidate(s.id, attempt);
      if (await subnetInUse(subnet)) continue;
      await ip(['addr', 'add', `${gateway}/24`, 'dev', s.bridge]);
      // Another stack may have claimed the same /24 a moment ago: the one that sees a rival backs off.
      if ((await subnetOwners(subnet)).length > 1) {
        await ip(['addr', 'del', `${gateway}/24`, 'dev', s.bridge]);
        continue;
      }
      this.#subnet = subnet;
      this.#gateway = gateway;
      const v6 = this.#families === 'ipv4' ? undefined : ipv6Range(subnet);
      if (v6 !== undefined) {
        // Only the bridge gets the /64 (a connected route, no forwarding): the host reaches the
        // pods and nothing else. `nodad`: the address is usable at once.
        await writeFile(`/proc/sys/net/ipv6/conf/${s.bridge}/disable_ipv6`, '0');
        await ip(['addr', 'add', `${v6.gateway}/64`, 'dev', s.bridge, 'nodad']);
        this.#subnet6 = v6.subnet;
      }
      await ip(['link', 'set', s.bridge, 'up']);
      await mkdir(s.confDir, { recursive: true });
      await mkdir(s.ipamDir, { recursive: true });
      const list = podNetworkConfig({ name: s.networkName, bridge: s.bridge, subnet, gateway, ipamDir: s.ipamDir, ...(v6 === undefined ? {} : { ipv6: v6 }), ipv4: this.#families !== 'ipv6' });
      await writeFile(join(s.confDir, confFile), `${JSON.stringify(list, null, 2)}\n`);
      this.#log.info({ subnet, subnet6: v6?.subnet, families: this.#families }, 'pod network ready');
      return;
    }
    throw new SandboxError('TESTBED_NETWORK_SETUP_FAILED', 'no free /24 for the pod network');
  }

  /** The pod's network namespace with lo up and eth0 from the conflist; undone again on failure. */
  async create(podUID: string): Promise<PodSandbox> {
    const existing = this.#sandboxes.get(podUID);
    if (existing !== undefined) return existing.sandbox;
    const netnsName = `${this.stack.netnsPrefix}${podUID}`;
    const netnsPath = await addNetns(netnsName);
    const rt = { containerId: podUID, netnsPath, cniPath: this.stack.cniPath };
    try {
      await cniAdd(loopbackConfig(), { ...rt, ifName: 'lo' });
      const result = await cniAdd(await this.#conflist(), { ...rt, ifName: 'eth0' });
      const podIPs = (result.ips ?? []).map((i) => i.address.split('/')[0] ?? '').filter((a) => a !== '');
      podIPs.sort((a, b) => Number(a.includes(':')) - Number(b.includes(':')));
      const sandbox = { netnsName, netnsPath, podIPs };
      this.#sandboxes.set(podUID, { sandbox, result });
      return sandbox;
    } catch (err) {
      await this.#teardown(podUID, netnsName, netnsPath, undefined).catch((e: unknown) => this.#log.warn({ err: e, podUID }, 'undoing a failed sandbox failed'));
      throw err;
    }
  }

  /** CNI DEL (releasing the pod's address) and the namespace removed. Idempotent. */
  async destroy(podUID: string): Promise<void> {
    const entry = this.#sandboxes.get(podUID);
    if (entry === undefined) return;
    await this.#teardown(podUID, entry.sandbox.netnsName, entry.sandbox.netnsPath, entry.result);
    this.#sandboxes.delete(podUID);
  }

  async close(): Promise<void> {
    for (const uid of [...this.#sandboxes.keys()]) {
      await this.destroy(uid).catch((err: unknown) => this.#log.warn({ err, podUID: uid }, 'sandbox teardown failed'));
    }
    await this.#removeLeftovers();
  }

  async #conflist(): Promise<CniNetworkList> {
    return JSON.parse(await readFile(join(this.stack.confDir, confFile), 'utf8')) as CniNetworkList;
  }

  async #teardown(podUID: string, netnsName: string, netnsPath: string, result: CniResult | undefined): Promise<void> {
    const rt = { containerId: podUID, netnsPath, cniPath: this.stack.cniPath };
    // Every step runs even when one before it failed (a broken conflist must not keep the
    // namespace); the first error is reported.
    const errors: unknown[] = [];
    await cniDel(await this.#conflist(), { ...rt, ifName: 'eth0' }, result).catch((e: unknown) => errors.push(e));
    await cniDel(loopbackConfig(), { ...rt, ifName: 'lo' }).catch((e: unknown) => errors.push(e));
    await deleteNetns(netnsName).catch((e: unknown) => errors.push(e));
    if (errors.length > 0) throw errors[0];
  }

  /** What a crashed kubelet of this stack left: namespaces named for it, its bridge, its CNI state. */
  async #removeLeftovers(): Promise<void> {
    const names = await readdir(netnsDir).catch(() => [] as string[]);
    for (const name of names.filter((n) => n.startsWith(this.stack.netnsPrefix))) await deleteNetns(name);
    await runCommand(['ip', 'link', 'delete', this.stack.bridge, 'type', 'bridge']);
    await rm(join(this.stack.confDir, '..'), { recursive: true, force: true });
  }
}

export type PodIPFamilies = 'ipv4' | 'dual' | 'ipv6';

/** The pods' address families from the `ipv6` option or PODVIRT_TESTBED_IPV6 (`1`: dual-stack, `only`: IPv6 only). */
export function podIPFamilies(ipv6: boolean | string | undefined): PodIPFamilies {
  if (ipv6 === true || ipv6 === '1') return 'dual';
  if (ipv6 === 'only') return 'ipv6';
  if (ipv6 === undefined || ipv6 === false || ipv6 === '' || ipv6 === '0') return 'ipv4';
  throw new SandboxError('TESTBED_NETWORK_SETUP_FAILED', `PODVIRT_TESTBED_IPV6=${ipv6}: expected 1 (dual-stack) or only (IPv6 only)`);
}

async function ip(args: string[]): Promise<void> {
  const res = await runCommand(['ip', ...args]);
  if (res.code !== 0) throw new SandboxError('TESTBED_NETWORK_SETUP_FAILED', `ip ${args.join(' ')}: ${res.stderr.trim()}`);
}

/** Interfaces on this host with an IPv4 address inside `subnet` (a /24). */
async function subnetOwners(subnet: string): Promise<string[]> {
  const prefix = subnet.split('.').slice(0, 3).join('.') + '.';
  const res = await runCommand(['ip', '-o', '-4', 'addr', 'show']);
  return res.stdout.split('\n').filter((l) => l.split(/\s+/)[3]?.startsWith(prefix) === true).map((l) => l.split(/\s+/)[1] ?? '');
}

async function subnetInUse(subnet: string): Promise<boolean> {
  return (await subnetOwners(subnet)).length > 0;
}
