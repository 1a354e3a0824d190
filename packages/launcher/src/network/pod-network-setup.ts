import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { VmiInvalidError } from '@podvirt/api';
import { LauncherError } from '../errors.js';
import { runTool } from '../prepare/run-tool.js';
import { DhcpServer } from './dhcp-server.js';
import { NetworkPlanError, planNetwork, type NetworkPlan, type NicAttachment, type SetupStep } from './network-plan.js';
import { parsePodLink } from './pod-link.js';
import { parseResolvConf } from './resolv-conf.js';

/** The VMI fields the network set-up reads (from @podvirt/api's VMI). */
export interface NetworkedVmi {
  readonly metadata?: { readonly name?: string; readonly uid?: string };
  readonly spec?: {
    readonly hostname?: string;
    readonly networks?: ReadonlyArray<{ readonly name: string; readonly pod?: { readonly vmNetworkCIDR?: string } }>;
    readonly domain?: {
      readonly devices?: {
        readonly interfaces?: ReadonlyArray<{
          readonly name: string;
          readonly masquerade?: object;
          readonly bridge?: object;
          readonly macAddress?: string;
          readonly ports?: ReadonlyArray<{ readonly protocol?: string; readonly port: number }>;
        }>;
      };
    };
  };
}

export interface PodNetworkSetupOptions {
  readonly log: Logger;
  /** Where the applied plan is kept (`<private dir>/<uid>`), so a second Sync reuses it. */
  readonly stateDir: string;
  /** The pod's resolv.conf (default /etc/resolv.conf). */
  readonly resolvConf?: string;
  /** The pod's interface CNI made (default eth0). */
  readonly podIface?: string;
  /** Told the wired NICs once they are ready (the domain snapshot reports them). */
  readonly onAttached?: (attachments: readonly NicAttachment[]) => void;
}

// Interfaces a pod's own network namespace may hold: CNI's, and what this set-up adds.
const POD_NAMESPACE_LINKS = /^(lo|eth0|eth0-nic|k6t-eth0|tap0)$/;

/**
 * Phase 1 and 2 of the pod network, inside the launcher's pod: discover the pod interface,
 * wire the tap, in-pod bridge and (masquerade) nftables NAT, then serve DHCP to the guest
 * NIC. Runs once per launcher; later Syncs get the same attachments. `close()` stops the
 * DHCP server (the namespace, with everything made here, goes with the pod).
 */
export class PodNetworkSetup {
  readonly #o: PodNetworkSetupOptions;
  #done: Promise<ReadonlyMap<string, NicAttachment>> | undefined;
  readonly #servers: DhcpServer[] = [];
  #closed = false;

  constructor(o: PodNetworkSetupOptions) {
    this.#o = o;
  }

  /** Interface name → how the domain attaches it. Empty when the VMI has no pod-network interface. */
  resolve(vmi: NetworkedVmi): Promise<ReadonlyMap<string, NicAttachment>> {
    const ifaces = vmi.spec?.domain?.devices?.interfaces ?? [];
    if (ifaces.length === 0) return Promise.resolve(new Map());
    this.#done ??= this.#setUp(vmi).catch((err: unknown) => {
      this.#done = undefined;
      throw err;
    });
    return this.#done;
  }

  async #setUp(vmi: NetworkedVmi): Promise<ReadonlyMap<string, NicAttachment>> {
    const log = this.#o.log.child({ subcomponent: 'pod-network' });
    const cached = await this.#readCache();
    const plans = cached ?? (await this.#plan(vmi));
    if (cached === undefined) {
      await this.#checkPodNamespace();
      for (const plan of plans) {
        log.info({ iface: plan.attachment.ifaceName, binding: plan.attachment.binding, tap: plan.attachment.tap }, 'wiring the pod network');
        for (const step of plan.steps) await this.#apply(step);
      }
      await writeFile(join(this.#o.stateDir, 'pod-network.json'), JSON.stringify(plans));
    }
    for (const plan of plans) {
      if (this.#closed) break;
      this.#servers.push(await DhcpServer.start(plan.lease, log));
    }
    this.#o.onAttached?.(plans.map((p) => p.attachment));
    return new Map(plans.map((p) => [p.attachment.ifaceName, p.attachment]));
  }

  async #plan(vmi: NetworkedVmi): Promise<NetworkPlan[]> {
    const podIface = this.#o.podIface ?? 'eth0';
    const [addr, route] = await Promise.all([
      runTool('ip', ['-j', 'addr', 'show', 'dev', podIface]).catch(() => '[]'),
      runTool('ip', ['-j', '-4', 'route', 'show', 'default']).catch(() => '[]'),
    ]);
    const link = parsePodLink(addr, route);
    if (link === undefined) throw new LauncherError('LAUNCHER_ERR_PREPARE', `the pod has no interface ${podIface} to connect the guest to`);
    const resolver = parseResolvConf(await readFile(this.#o.resolvConf ?? '/etc/resolv.conf', 'utf8').catch(() => ''));
    const spec = vmi.spec;
    const ifaces = spec?.domain?.devices?.interfaces ?? [];
    return ifaces.map((iface, i) => {
      const network = spec?.networks?.find((n) => n.name === iface.name);
      const binding = iface.masquerade !== undefined ? 'masquerade' : 'bridge';
      try {
        return planNetwork(
          {
            vmiUid: vmi.metadata?.uid ?? '',
            hostname: spec?.hostname ?? vmi.metadata?.name ?? 'vmi',
            iface: { name: iface.name, binding, ...(iface.macAddress === undefined ? {} : { macAddress: iface.macAddress }), ...(iface.ports === undefined ? {} : { ports: iface.ports }) },
            link,
            resolver,
            ...(network?.pod?.vmNetworkCIDR === undefined ? {} : { vmNetworkCIDR: network.pod.vmNetworkCIDR }),
          },
          i,
        );
      } catch (err) {
        if (err instanceof NetworkPlanError) throw VmiInvalidError.at(err.field, 'Invalid', err.message);
        throw err;
      }
    });
  }

  /** Refuses to touch a namespace that is not a pod's (say, a launcher started on the host by mistake). */
  async #checkPodNamespace(): Promise<void> {
    const links = (JSON.parse(await runTool('ip', ['-j', 'link', 'show'])) as Array<{ ifname?: string }>).map((l) => l.ifname ?? '');
    const foreign = links.filter((n) => !POD_NAMESPACE_LINKS.test(n));
    if (foreign.length > 0) {
      throw new LauncherError('LAUNCHER_ERR_PREPARE', `refusing to wire the pod network: this network namespace has interfaces a pod's does not (${foreign.join(', ')}); is the launcher outside its pod?`);
    }
  }

  async #apply(step: SetupStep): Promise<void> {
    if (step.kind === 'ip') await runTool('ip', step.args);
    else if (step.kind === 'sysctl') await writeFile(`/proc/sys/${step.key}`, step.value).catch((err: unknown) => {
      throw new LauncherError('LAUNCHER_ERR_PREPARE', `sysctl ${step.key}=${step.value} failed: ${(err as Error).message}`, { cause: err });
    });
    else {
      const file = join(this.#o.stateDir, 'pod-network.nft');
      await writeFile(file, step.ruleset);
      await runTool('nft', ['-f', file]);
    }
  }

  async #readCache(): Promise<NetworkPlan[] | undefined> {
    try {
      return JSON.parse(await readFile(join(this.#o.stateDir, 'pod-network.json'), 'utf8')) as NetworkPlan[];
    } catch {
      return undefined;
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    await this.#done?.catch(() => undefined);
    await Promise.all(this.#servers.splice(0).map((s) => s.close()));
  }
}
