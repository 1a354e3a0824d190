import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { parsePodNetworkHandoff, POD_NETWORK_HANDOFF_FILE, type NicAttachment, type WiredNic } from '@podvirt/api';
import { LauncherError } from '../errors.js';
import { DhcpServer } from './dhcp-server.js';
import { Dhcpv6Server } from './dhcpv6-server.js';

/** The VMI fields the network phase reads (from @podvirt/api's VMI). */
export interface NetworkedVmi {
  readonly spec?: { readonly domain?: { readonly devices?: { readonly interfaces?: ReadonlyArray<{ readonly name: string }> } } };
}

export interface PodNetworkSetupOptions {
  readonly log: Logger;
  /** `<private dir>/<uid>`, where the handler leaves the wired NICs (POD_NETWORK_HANDOFF_FILE). */
  readonly stateDir: string;
  /** Told the wired NICs once they are ready (the domain snapshot reports them). */
  readonly onAttached?: (attachments: readonly NicAttachment[]) => void;
}

/**
 * The launcher's unprivileged phase of the pod network, as virt-launcher's phase 2: the handler
 * has wired the tap, the in-pod bridge and the NAT in this pod's network namespace and left the
 * NICs and their leases here; this serves DHCP to each guest NIC and hands the taps to the
 * converter. Nothing here needs NET_ADMIN; binding the DHCP port needs NET_BIND_SERVICE (or
 * root), as KubeVirt's launcher does. Runs once per launcher; `close()` stops the DHCP servers.
 */
export class PodNetworkSetup {
  readonly #o: PodNetworkSetupOptions;
  #done: Promise<ReadonlyMap<string, NicAttachment>> | undefined;
  readonly #servers: Array<DhcpServer | Dhcpv6Server> = [];
  #closed = false;

  constructor(o: PodNetworkSetupOptions) {
    this.#o = o;
  }

  /** Interface name → how the domain attaches it. Empty when the VMI has no pod-network interface. */
  resolve(vmi: NetworkedVmi): Promise<ReadonlyMap<string, NicAttachment>> {
    const ifaces = vmi.spec?.domain?.devices?.interfaces ?? [];
    if (ifaces.length === 0) return Promise.resolve(new Map());
    this.#done ??= this.#serve(ifaces.map((i) => i.name)).catch((err: unknown) => {
      this.#done = undefined;
      throw err;
    });
    return this.#done;
  }

  async #serve(names: readonly string[]): Promise<ReadonlyMap<string, NicAttachment>> {
    const log = this.#o.log.child({ subcomponent: 'pod-network' });
    const nics = await this.#readHandoff();
    const missing = names.filter((n) => !nics.some((nic) => nic.attachment.ifaceName === n));
    if (missing.length > 0) throw new LauncherError('LAUNCHER_ERR_PREPARE', `the handler wired no pod network for interface ${missing.join(', ')}`);
    for (const nic of nics) {
      if (this.#closed) break;
      // DHCPv4 where the pod has IPv4, DHCPv6 where it has IPv6 (masquerade), as KubeVirt's launcher.
      if (nic.lease !== undefined) this.#servers.push(await DhcpServer.start(nic.lease, log));
      const v6 = nic.lease6;
      if (v6 !== undefined) this.#servers.push(await Dhcpv6Server.start({ lease: v6, iface: v6.serverIface, serverMac: v6.serverMac, log }));
    }
    this.#o.onAttached?.(nics.map((n) => n.attachment));
    return new Map(nics.map((n) => [n.attachment.ifaceName, n.attachment]));
  }

  async #readHandoff(): Promise<WiredNic[]> {
    const file = join(this.#o.stateDir, POD_NETWORK_HANDOFF_FILE);
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      // The handler wires the pod before its first Sync; retried on the next one.
      throw new LauncherError('LAUNCHER_ERR_PREPARE', `the pod network is not wired yet (no ${file} from the handler)`, { cause: err });
    }
    try {
      return parsePodNetworkHandoff(text);
    } catch (err) {
      throw new LauncherError('LAUNCHER_ERR_PREPARE', `${file} is not a pod network handoff: ${(err as Error).message}`, { cause: err });
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    await this.#done?.catch(() => undefined);
    await Promise.all(this.#servers.splice(0).map((s) => s.close()));
  }
}
