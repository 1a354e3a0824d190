// Hotplugged disks of the running domain (KubeVirt's launcher attaches and detaches them on
// each Sync; podvirt's own): a hotpluggable claim of the VMI whose volume podvirt-handler has
// mounted into the pod (status phase MountedToPod or Ready, the file at
// `<hotplug dir>/<volume>.img`) is opened confined and attached live as a scsi disk with the
// disk's serial and cache; a hotplugged disk (alias `ua-<volume>`) whose volume left the spec is
// detached, and the detach is done only when libvirt says the guest released it
// (DEVICE_REMOVED). A guest that keeps it past the deadline is LAUNCHER_ERR_HOTPLUG, naming the
// disk; the next Sync asks again.

import { hotplugVolumeNames, VolumePhase, type DefaultedVmi } from '@podvirt/api';
import type { Logger } from 'pino';
import { devName, hotplugDiskXml } from '../convert/disks.js';
import { LauncherError } from '../errors.js';
import type { PersistentDisks } from '../prepare/persistent-disks.js';
import type { CallOptions, DomainConnection } from './domain-connection.js';

/** KubeVirt waits this long for a guest to release a detached disk. */
export const DETACH_TIMEOUT_MS = 30_000;

export interface HotplugDisksOptions {
  readonly conn: DomainConnection;
  readonly domain: string;
  /** Where the pod sees its hotplugged disks (/var/run/kubevirt/hotplug-disks). */
  readonly dir: string;
  readonly disks: Pick<PersistentDisks, 'openHotplug' | 'releaseHotplug'>;
  readonly log: Logger;
  readonly detachTimeoutMs?: number;
}

interface LiveDisk {
  readonly xml: string;
  readonly target: string;
  readonly bus: string;
}

const DISK = /<disk\b[\s\S]*?<\/disk>/g;
const TARGET = /<target\b[^>]*\bdev=['"]([^'"]+)['"]/;
const BUS = /<target\b[^>]*\bbus=['"]([^'"]+)['"]/;
const ALIAS = /<alias\b[^>]*\bname=['"]ua-([^'"]+)['"]/;

/** The live domain's disks by VMI volume name (alias `ua-<name>`). */
function liveDisks(xml: string): Map<string, LiveDisk> {
  const out = new Map<string, LiveDisk>();
  for (const m of xml.matchAll(DISK)) {
    const alias = ALIAS.exec(m[0])?.[1];
    const target = TARGET.exec(m[0])?.[1];
    if (alias !== undefined && target !== undefined) out.set(alias, { xml: m[0], target, bus: BUS.exec(m[0])?.[1] ?? '' });
  }
  return out;
}

export class HotplugDisks {
  readonly #o: HotplugDisksOptions;
  /**
   * The hotplugged (scsi, `ua-`) disks the live domain had after the last sync; undefined until
   * the first, which reads the live XML whatever the VMI asks (a domain this process did not
   * attach to may already carry some).
   */
  #hotplugged: Set<string> | undefined;

  constructor(o: HotplugDisksOptions) {
    this.#o = o;
  }

  /**
   * Whether a sync has anything to look at: the VMI has hotpluggable volumes, or the domain had
   * hotplugged disks (one may have left the spec), or the domain was never looked at. Every other
   * Sync (most of them: every VMI without hotplug) costs no libvirt call here.
   */
  due(vmi: DefaultedVmi): boolean {
    return this.#hotplugged === undefined || this.#hotplugged.size > 0 || hotplugVolumeNames(vmi.spec).size > 0;
  }

  /** Attaches what is mounted and wanted, detaches what left the spec. */
  async sync(vmi: DefaultedVmi, o: CallOptions = {}): Promise<void> {
    const { conn, domain } = this.#o;
    const live = liveDisks(await conn.getXml(domain, o));
    const inSpec = new Set((vmi.spec.volumes ?? []).map((v) => v.name));
    const wanted = hotplugVolumeNames(vmi.spec);
    // A boot disk on the scsi bus is not a hotplugged one: its volume is in the spec, not hotpluggable.
    this.#hotplugged = new Set([...live].filter(([name, d]) => d.bus === 'scsi' && (!inSpec.has(name) || wanted.has(name))).map(([name]) => name));
    // A hotplugged disk is a scsi one; every disk the domain booted with has its volume in the spec.
    for (const [name, disk] of live) {
      if (!inSpec.has(name) && disk.bus === 'scsi') {
        await this.#detach(name, disk, o);
        this.#hotplugged.delete(name);
      }
    }
    const mounted = new Set((vmi.status?.volumeStatus ?? []).filter((s) => s.phase === VolumePhase.MountedToPod || s.phase === VolumePhase.Ready).map((s) => s.name));
    const targets = new Set([...live.values()].map((d) => d.target));
    for (const name of wanted) {
      if (live.has(name) || !mounted.has(name)) continue;
      const opened = await this.#o.disks.openHotplug(vmi, name, this.#o.dir);
      let n = 0;
      while (targets.has(devName('sd', n))) n++;
      const dev = devName('sd', n);
      await conn.attachDevice(domain, hotplugDiskXml(vmi, name, opened, dev), o).catch((err: unknown) => {
        throw new LauncherError('LAUNCHER_ERR_HOTPLUG', `attaching volume ${name} as ${dev}: ${(err as Error).message}`, { cause: err });
      });
      targets.add(dev);
      this.#hotplugged.add(name);
      this.#o.log.info({ volume: name, target: dev }, 'hotplugged disk attached');
    }
  }

  async #detach(name: string, disk: LiveDisk, o: CallOptions): Promise<void> {
    const { conn, domain } = this.#o;
    const timeoutMs = this.#o.detachTimeoutMs ?? DETACH_TIMEOUT_MS;
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => (release = resolve));
    const unsubscribe = await conn.subscribe((e) => {
      if (e.kind === 'deviceRemoved' && e.domain === domain && e.alias === `ua-${name}`) release();
    }, o);
    let timer: NodeJS.Timeout | undefined;
    try {
      await conn.detachDevice(domain, disk.xml, o);
      const deadline = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), timeoutMs)));
      // The event may have come before the call returned; the live XML says so too.
      if ((await Promise.race([released, deadline])) === 'timeout' && liveDisks(await conn.getXml(domain, o)).has(name)) {
        throw new LauncherError('LAUNCHER_ERR_HOTPLUG', `the guest did not release disk ${name} (${disk.target}) within ${Math.round(timeoutMs / 1000)} s of the detach request`);
      }
    } finally {
      clearTimeout(timer);
      await unsubscribe();
    }
    await this.#o.disks.releaseHotplug(name, this.#o.dir);
    this.#o.log.info({ volume: name, target: disk.target }, 'hotplugged disk detached');
  }
}
