// The disks that outlive the VM — hostDisk and persistentVolumeClaim volumes — found where the
// pod mounts them (KubeVirt's paths) and opened confined to that mount, never at a host path:
//   hostDisk               <vmi-disks>/<volume><path>               (the pod mounts the allowed
//                                                                    directory holding it there)
//   PVC, filesystem claim  <vmi-disks>/<volume>/disk.img            (created sparse at the claim's size)
//   PVC, block claim       <dev>/<volume>                           (the pod's volumeDevice)
//   hotplugged, filesystem <hotplug-disks>/<volume>.img             (podvirt-handler's bind mount)
//   hotplugged, block      <hotplug-disks>/<volume>                 (podvirt-handler's device node)
// Each is opened once with openConfined; libvirt gets `/proc/<launcher pid>/fd/<n>`, so qemu opens
// exactly the file that was checked. Every refusal is LAUNCHER_ERR_VOLUME naming the field: the
// same step would fail on every retry.

import { constants } from 'node:fs';
import { lstat, open, stat, statfs } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Logger } from 'pino';
import { claimDiskSize, isHotplugVolume, toBytes, type DefaultedVmi, type Volume } from '@podvirt/api';
import type { PersistentDisk } from '../convert/context.js';
import { LauncherError } from '../errors.js';
import { ConfinementError, openConfined, type ConfinedFile } from '../host/open-confined.js';
import { fittedSize, formatBytes, MINIMUM_RESERVE_BYTES } from './disk-image.js';

export interface PersistentDisksOptions {
  /** `<private dir>/vmi-disks`: the pod mounts each filesystem claim and hostDisk directory at `<dir>/<volume>`. */
  readonly vmiDisksDir: string;
  /** Where block claims appear (`/dev`). */
  readonly devDir: string;
  /** The launcher's pid as libvirt and qemu see it (same PID namespace). */
  readonly pid: number;
  readonly log?: Logger;
}

/** Where one disk must be and what may be done to it. */
interface DiskPlan {
  readonly field: string;
  /** The pod's mount: the disk must lie strictly inside it. */
  readonly root: string;
  readonly path: string;
  readonly block: boolean;
  /** Created sparse at this size when missing. */
  readonly createBytes?: bigint;
  /** An existing image larger than this does not fit. */
  readonly maxBytes?: bigint;
}

/** Where the handler brings a hotplugged claim: a block claim's node, a filesystem claim's image. */
function hotplugPath(dir: string, volume: string, block: boolean): string {
  return join(dir, block ? volume : `${volume}.img`);
}

/** The one key of a file opened once: its confinement root, its path, how it is opened. */
function openKey(plan: Pick<DiskPlan, 'root' | 'path' | 'block'>): string {
  return `${plan.root}\0${plan.path}\0${plan.block}`;
}

function volumeError(field: string, message: string, cause?: unknown): LauncherError {
  return new LauncherError('LAUNCHER_ERR_VOLUME', `${field}: ${message}`, cause === undefined ? undefined : { cause });
}

/** What the pod gives a claim: a block device at `<dev>/<volume>`, or a directory at `<vmi-disks>/<volume>`. */
async function podMode(o: PersistentDisksOptions, volume: string): Promise<'block' | 'filesystem' | undefined> {
  const dev = await lstat(join(o.devDir, volume)).catch(() => undefined);
  if (dev?.isBlockDevice() === true) return 'block';
  const dir = await stat(join(o.vmiDisksDir, volume)).catch(() => undefined);
  return dir?.isDirectory() === true ? 'filesystem' : undefined;
}

async function planClaim(vmi: DefaultedVmi, volume: Volume, index: number, o: PersistentDisksOptions): Promise<DiskPlan> {
  const pvc = volume.persistentVolumeClaim!;
  const field = `spec.volumes[${index}].persistentVolumeClaim`;
  const claim = `claim ${pvc.claimName}`;
  const mode = await podMode(o, volume.name);
  const expected = vmi.status?.volumeStatus?.find((s) => s.name === volume.name)?.persistentVolumeClaimInfo?.volumeMode;
  if (mode === undefined) {
    throw volumeError(field, `the pod has neither a device at ${join(o.devDir, volume.name)} nor a mount at ${join(o.vmiDisksDir, volume.name)} for ${claim}`);
  }
  if (expected === 'Block' && mode === 'filesystem') {
    throw volumeError(field, `${claim} has volumeMode Block, but the pod mounts it as a filesystem at ${join(o.vmiDisksDir, volume.name)}; a block claim must be a volumeDevice`);
  }
  if (expected === 'Filesystem' && mode === 'block') {
    throw volumeError(field, `${claim} has volumeMode Filesystem, but the pod gives it as a block device at ${join(o.devDir, volume.name)}; a filesystem claim must be a volumeMount`);
  }
  if (mode === 'block') return { field, root: o.devDir, path: join(o.devDir, volume.name), block: true };
  const root = join(o.vmiDisksDir, volume.name);
  const size = claimDiskSize(vmi, volume.name, field);
  // A read-only claim's image must exist already; a writable one is made at the claim's size.
  const sizes = size === undefined ? {} : pvc.readOnly === true ? { maxBytes: size } : { createBytes: size, maxBytes: size };
  return { field, root, path: join(root, 'disk.img'), block: false, ...sizes };
}

function planHostDisk(volume: Volume, index: number, o: PersistentDisksOptions): DiskPlan {
  const hd = volume.hostDisk!;
  const root = join(o.vmiDisksDir, volume.name);
  const create = hd.type === 'DiskOrCreate' && hd.capacity !== undefined ? { createBytes: toBytes(hd.capacity) } : {};
  // Every component below the volume's root is walked without following a link: the mount
  // point's parents (made in the pod), the allowed directory, and the VMI's own components.
  return { field: `spec.volumes[${index}].hostDisk`, root, path: join(root, hd.path), block: false, ...create };
}

/** Whether the open file takes O_DIRECT (reopened through its descriptor, so the same file). */
async function directIo(file: ConfinedFile): Promise<boolean> {
  try {
    const fh = await open(`/proc/self/fd/${file.fd}`, constants.O_RDONLY | constants.O_DIRECT);
    await fh.close();
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EINVAL') return false;
    throw err;
  }
}

/**
 * The persistent disks of the launcher's VMI. Descriptors stay open until `close()` (the
 * launcher's end); a re-sync reuses them, so a disk is created at most once.
 */
export class PersistentDisks {
  readonly #o: PersistentDisksOptions;
  readonly #open = new Map<string, Promise<{ file: ConfinedFile; disk: PersistentDisk }>>();

  constructor(o: PersistentDisksOptions) {
    this.#o = o;
  }

  /** volume name → its opened disk. */
  async resolve(vmi: DefaultedVmi): Promise<ReadonlyMap<string, PersistentDisk>> {
    const out = new Map<string, PersistentDisk>();
    for (const [i, volume] of (vmi.spec.volumes ?? []).entries()) {
      let plan: DiskPlan | undefined;
      if (volume.hostDisk !== undefined) plan = planHostDisk(volume, i, this.#o);
      // A hotplugged claim is not in the launcher pod's own mounts: it arrives later, through an attachment pod.
      else if (volume.persistentVolumeClaim !== undefined && !isHotplugVolume(volume)) plan = await planClaim(vmi, volume, i, this.#o);
      if (plan !== undefined) out.set(volume.name, (await this.#openOnce(plan)).disk);
    }
    return out;
  }

  /**
   * A hotplugged claim's disk, which podvirt-handler brought into `dir`: a filesystem claim's
   * image mounted at `<dir>/<volume>.img`, a block claim's device node at `<dir>/<volume>` (its
   * status entry says which). Opened confined to `dir`, never created here. A failure is
   * LAUNCHER_ERR_HOTPLUG (retried): the VMI runs on without the disk.
   */
  async openHotplug(vmi: DefaultedVmi, volume: string, dir: string): Promise<PersistentDisk> {
    const index = (vmi.spec.volumes ?? []).findIndex((v) => v.name === volume);
    const block = vmi.status?.volumeStatus?.find((s) => s.name === volume)?.persistentVolumeClaimInfo?.volumeMode === 'Block';
    const plan: DiskPlan = { field: `spec.volumes[${index}].persistentVolumeClaim`, root: dir, path: hotplugPath(dir, volume, block), block };
    try {
      return (await this.#openOnce(plan)).disk;
    } catch (err) {
      throw new LauncherError('LAUNCHER_ERR_HOTPLUG', `volume ${volume}: ${(err as Error).message}`, { cause: err });
    }
  }

  /** Closes a hotplugged disk's descriptor once the domain let go of it. */
  async releaseHotplug(volume: string, dir: string): Promise<void> {
    for (const block of [false, true]) {
      const key = openKey({ root: dir, path: hotplugPath(dir, volume, block), block });
      const p = this.#open.get(key);
      this.#open.delete(key);
      const opened = await p?.catch(() => undefined);
      await opened?.file.close();
    }
  }

  #openOnce(plan: DiskPlan): Promise<{ file: ConfinedFile; disk: PersistentDisk }> {
    const key = openKey(plan);
    let p = this.#open.get(key);
    if (p === undefined) {
      p = this.#openDisk(plan).catch((err: unknown) => {
        this.#open.delete(key);
        if (err instanceof ConfinementError) throw volumeError(plan.field, err.message, err);
        throw err;
      });
      this.#open.set(key, p);
    }
    return p;
  }

  async #openDisk(plan: DiskPlan): Promise<{ file: ConfinedFile; disk: PersistentDisk }> {
    const accept = plan.block ? 'block' : 'file';
    const file = await openConfined(plan.root, plan.path, { accept }).catch(async (err: unknown) => {
      if (!(err instanceof ConfinementError) || err.reason !== 'NOT_FOUND' || plan.createBytes === undefined) throw err;
      return openConfined(plan.root, plan.path, { accept, create: { sizeBytes: await this.#fitted(plan, plan.createBytes) } });
    });
    try {
      const st = await stat(`/proc/self/fd/${file.fd}`);
      if (!plan.block && plan.maxBytes !== undefined && BigInt(st.size) > plan.maxBytes) {
        throw volumeError(plan.field, `the disk image ${plan.path} (${formatBytes(BigInt(st.size))}) is larger than its volume allows (${formatBytes(plan.maxBytes)})`);
      }
      const io = { directIo: await directIo(file), preallocated: !plan.block && st.blocks * 512 >= st.size };
      return { file, disk: { path: file.procPath(this.#o.pid), block: plan.block, io } };
    } catch (err) {
      await file.close();
      throw err;
    }
  }

  /** KubeVirt's rule: the requested size, or what the volume has free when it is short by at most 10 %. */
  async #fitted(plan: DiskPlan, requested: bigint): Promise<bigint> {
    const fs = await statfs(dirname(plan.path)).catch((cause: unknown) => {
      throw volumeError(plan.field, `${dirname(plan.path)} is not mounted in this pod`, cause);
    });
    const free = BigInt(fs.bavail) * BigInt(fs.bsize) - MINIMUM_RESERVE_BYTES;
    const size = fittedSize(requested, free < 0n ? 0n : free, plan.field);
    if (size !== requested) this.#o.log?.warn({ field: plan.field, requested: String(requested), size: String(size) }, 'volume smaller than requested, within toleration');
    return size;
  }

  async close(): Promise<void> {
    const files = await Promise.allSettled(this.#open.values());
    this.#open.clear();
    for (const f of files) if (f.status === 'fulfilled') await f.value.file.close();
  }
}
