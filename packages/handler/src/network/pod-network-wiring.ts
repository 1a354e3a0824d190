// The privileged phase of the pod network, done by the handler as virt-handler does it: inside
// the launcher pod's network namespace it makes the tap (owned by the launcher's user), the
// in-pod bridge and, for masquerade, the nftables NAT, then leaves the NICs and their DHCP
// leases in the launcher's private directory. The launcher (unprivileged: no NET_ADMIN) reads
// them, serves DHCP and attaches the tap to the domain.

import { readFile, rename, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { POD_NETWORK_HANDOFF_FILE, VmiInvalidError, vmiLogBindings, type DefaultedVmi, type WiredNic } from '@podvirt/api';
import type { Logger } from 'pino';
import { HandlerError } from '../handler-error.js';
import { findLauncherPid, isLauncherOf, processOwner, servesSocket, sharesOwnNetns } from './launcher-process.js';
import { nsenterCommand, type NetnsCommand } from './netns-command.js';
import { pathInRoot } from './path-in-root.js';
import { NetworkPlanError, planNetwork, type NetworkPlan, type SetupStep } from './network-plan.js';
import { parsePodLink } from './pod-link.js';
import { parseResolvConf } from './resolv-conf.js';

export interface PodNetworkWiringOptions {
  readonly log: Logger;
  /** The node's /proc (the handler runs with hostPID). */
  readonly procRoot?: string;
  /** The launcher's private directory inside its pod (its `--private-dir`, KubeVirt's path). */
  readonly launcherPrivateDir?: string;
  /** The pod's interface CNI made. */
  readonly podIface?: string;
  readonly command?: NetnsCommand;
}

/** The plan, kept before the first change, so that a handler that stops half-way finishes the same plan. */
const PLAN_FILE = 'pod-network-plan.json';
const RULESET_FILE = 'pod-network.nft';

export class PodNetworkWiring {
  readonly #o: Required<Omit<PodNetworkWiringOptions, 'log'>> & { log: Logger };
  /** VMI uid → the launcher pid found for it (checked again before each use). */
  readonly #pids = new Map<string, number>();

  constructor(o: PodNetworkWiringOptions) {
    this.#o = {
      log: o.log,
      procRoot: o.procRoot ?? '/proc',
      launcherPrivateDir: o.launcherPrivateDir ?? '/var/run/kubevirt-private',
      podIface: o.podIface ?? 'eth0',
      command: o.command ?? nsenterCommand,
    };
  }

  /**
   * Wires the VMI's pod-network interfaces in its launcher pod unless that is done already: a
   * repeated Sync and a restarted handler find the launcher's handoff file and change nothing.
   */
  async ensure(vmi: DefaultedVmi, signal?: AbortSignal, launcherSocket?: string): Promise<void> {
    if ((vmi.spec.domain.devices.interfaces ?? []).length === 0) return;
    const uid = vmi.metadata.uid ?? '';
    const pid = await this.#launcherPid(uid, launcherSocket);
    const root = join(this.#o.procRoot, String(pid), 'root');
    const dir = await pathInRoot(root, join(this.#o.launcherPrivateDir, uid));
    if (await exists(join(dir, POD_NETWORK_HANDOFF_FILE))) return;
    if (!(await exists(dir))) throw new HandlerError('HANDLER_ERR_POD_NETWORK', `the launcher (pid ${pid}) has not made its private directory ${this.#o.launcherPrivateDir}/${uid} yet`);
    if (await sharesOwnNetns(this.#o.procRoot, pid)) {
      throw new HandlerError('HANDLER_ERR_POD_NETWORK', `refusing to wire the pod network: the launcher (pid ${pid}) shares the node's network namespace; is it outside its pod?`);
    }
    const netns = join(this.#o.procRoot, String(pid), 'ns', 'net');
    const log = this.#o.log.child({ ...vmiLogBindings(vmi.metadata), pid });
    const plans = (await readPlans(join(dir, PLAN_FILE))) ?? (await this.#plan(vmi, pid, netns, dir, signal));
    for (const plan of plans) {
      log.info({ iface: plan.attachment.ifaceName, binding: plan.attachment.binding, tap: plan.attachment.tap }, 'wiring the pod network');
      for (const step of plan.steps) await this.#apply(netns, dir, step, signal);
    }
    const handoff: WiredNic[] = plans.map((p) => ({ attachment: p.attachment, ...(p.lease === undefined ? {} : { lease: p.lease }), ...(p.lease6 === undefined ? {} : { lease6: p.lease6 }) }));
    await writeWhole(join(dir, POD_NETWORK_HANDOFF_FILE), JSON.stringify(handoff));
  }

  /** Drops what is remembered of a VMI whose launcher is gone. */
  forget(uid: string): void {
    this.#pids.delete(uid);
  }

  async #launcherPid(uid: string, launcherSocket: string | undefined): Promise<number> {
    const known = this.#pids.get(uid);
    const still = known !== undefined && (await isLauncherOf(this.#o.procRoot, known, uid))
      && (launcherSocket === undefined || (await servesSocket(this.#o.procRoot, known, launcherSocket)));
    if (still) return known;
    const pid = await findLauncherPid(this.#o.procRoot, uid, launcherSocket);
    if (pid === undefined) {
      this.#pids.delete(uid);
      throw new HandlerError('HANDLER_ERR_POD_NETWORK', `no launcher process of VMI ${uid} runs on this node`);
    }
    this.#pids.set(uid, pid);
    return pid;
  }

  async #plan(vmi: DefaultedVmi, pid: number, netns: string, dir: string, signal?: AbortSignal): Promise<NetworkPlan[]> {
    const podIface = this.#o.podIface;
    const [addr, route] = await Promise.all([
      this.#tool(netns, ['ip', '-j', 'addr', 'show', 'dev', podIface], signal).catch(() => '[]'),
      this.#tool(netns, ['ip', '-j', '-4', 'route', 'show', 'default'], signal).catch(() => '[]'),
    ]);
    const link = parsePodLink(addr, route);
    if (link === undefined) throw new HandlerError('HANDLER_ERR_POD_NETWORK', `the launcher pod has no interface ${podIface} to connect the guest to`);
    const root = join(this.#o.procRoot, String(pid), 'root');
    const resolvConf = await readFile(await pathInRoot(root, '/etc/resolv.conf'), 'utf8').catch(() => '');
    const resolver = parseResolvConf(resolvConf);
    const tapOwner = await processOwner(this.#o.procRoot, pid);
    const { spec, metadata } = vmi;
    const plans = (spec.domain.devices.interfaces ?? []).map((iface, i) => {
      const network = spec.networks?.find((n) => n.name === iface.name);
      try {
        return planNetwork(
          {
            vmiUid: metadata.uid ?? '',
            hostname: metadata.name ?? 'vmi',
            iface: { name: iface.name, binding: iface.masquerade !== undefined ? 'masquerade' : 'bridge', ...(iface.macAddress === undefined ? {} : { macAddress: iface.macAddress }), ...(iface.ports === undefined ? {} : { ports: iface.ports }) },
            link,
            resolver,
            tapOwner,
            ...(network?.pod?.vmNetworkCIDR === undefined ? {} : { vmNetworkCIDR: network.pod.vmNetworkCIDR }),
          },
          i,
        );
      } catch (err) {
        if (err instanceof NetworkPlanError) throw VmiInvalidError.at(err.field, 'Invalid', err.message);
        throw err;
      }
    });
    await writeWhole(join(dir, PLAN_FILE), JSON.stringify(plans));
    return plans;
  }

  async #apply(netns: string, dir: string, step: SetupStep, signal?: AbortSignal): Promise<void> {
    if (step.kind === 'ip') {
      const res = await this.#o.command.run(netns, ['ip', ...step.args], signal);
      if (res.code !== 0 && !(step.done !== undefined && res.stderr.includes(step.done))) throw toolError(['ip', ...step.args], res.stderr);
    } else if (step.kind === 'sysctl') {
      await this.#tool(netns, ['sysctl', '-q', '-w', `${step.key}=${step.value}`], signal);
    } else {
      // Read by nft from the handler's own view of the launcher's directory.
      const file = join(dir, RULESET_FILE);
      await writeWhole(file, step.ruleset);
      await this.#tool(netns, ['nft', '-f', file], signal);
    }
  }

  async #tool(netns: string, argv: readonly string[], signal?: AbortSignal): Promise<string> {
    const res = await this.#o.command.run(netns, argv, signal);
    if (res.code !== 0) throw toolError(argv, res.stderr);
    return res.stdout;
  }
}

function toolError(argv: readonly string[], stderr: string): HandlerError {
  return new HandlerError('HANDLER_ERR_POD_NETWORK', `${argv.join(' ')} failed in the launcher pod's network namespace: ${stderr.trim()}`);
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(() => true, () => false);
}

async function readPlans(path: string): Promise<NetworkPlan[] | undefined> {
  const text = await readFile(path, 'utf8').catch(() => undefined);
  return text === undefined ? undefined : (JSON.parse(text) as NetworkPlan[]);
}

/** Written under a temporary name and renamed: the launcher never reads half a file. */
async function writeWhole(path: string, text: string): Promise<void> {
  await writeFile(`${path}.tmp`, text, { mode: 0o644 });
  await rename(`${path}.tmp`, path);
}
