// Hotplugged volumes on the node (KubeVirt's virt-handler hotplug-disk mounter, podvirt's own):
// the claim its attachment pod mounts is found under that pod's kubelet directory
// (`<pods>/<attach pod uid>/volumes/<plugin>/<pv>`, the one volume the pod has), its `disk.img`
// (made at the claim's size when missing) is bind-mounted onto `<volume>.img` in the launcher
// pod's `hotplug-disks` emptyDir, which the launcher mounts with HostToContainer propagation,
// so the file appears in the running pod at /var/run/kubevirt/hotplug-disks/<volume>.img, owned
// by the launcher's user, mode 0660. Every path is walked one component at a time without
// following a symbolic link, and the mount itself is made from open descriptors
// (/proc/self/fd/N), so nothing swapped in after a check can redirect it.
// The mount table is the state: a restarted handler finds what it mounted and goes on, and a
// volume no longer wanted (removed, VMI gone) is unmounted and its target file removed.
// A Block claim: the attachment pod's volumeDevice, which the kubelet shows as a link named after
// the PV under `<pods>/<attach pod uid>/volumeDevices/<plugin>/`, gives the device's numbers; the
// launcher container's device cgroup is allowed `b MAJOR:MINOR rwm` (device-cgroup.ts) and a
// block device node with those numbers, the launcher's, mode 0660, is made (mknod at the
// directory's descriptor under a temporary name, then renamed) as `<volume>` in the launcher pod's
// hotplug-disks, where the launcher opens it. The node in that directory is the state; removal
// denies the device again and removes the node.

import { spawn } from 'node:child_process';
import { constants } from 'node:fs';
import { lchown, lstat, open, readdir, readFile, realpath, rename, rm, stat, type FileHandle } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { claimDiskSize, isHotplugVolume, VolumePhase, type VirtualMachineInstance, type VolumeStatus } from '@podvirt/api';
import type { Logger } from 'pino';
import { HandlerError } from '../handler-error.js';
import { DeviceCgroups, type BlockDevice, type DeviceAccess } from './device-cgroup.js';

export const HOTPLUG_DISKS_VOLUME = 'hotplug-disks';
/** Where the launcher sees them (the launcher pod's mount of the emptyDir). */
export const IN_POD_HOTPLUG_DIR = '/var/run/kubevirt/hotplug-disks';
const DISK_IMAGE = 'disk.img';
const DISK_MODE = 0o660;
// Volume plugins whose directories hold a claim's files: the testbed's (as the real kubelet's
// local volumes) and CSI's (`<pv>/mount`).
const CLAIM_PLUGINS: Readonly<Record<string, string>> = { 'kubernetes.io~local-volume': '', 'kubernetes.io~csi': 'mount' };
// Where the kubelet maps a block claim for a pod: `<plugin>/<pv>`, a link to the device.
const BLOCK_PLUGINS = ['kubernetes.io~local-volume', 'kubernetes.io~csi'] as const;
const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;
const TOOL_TIMEOUT_MS = 30_000;

/** Runs mount/umount with the given descriptors as fds 3, 4 …; a fake replaces it in tests. */
export type MountTool = (argv: readonly string[], fds: readonly number[]) => Promise<void>;

export const mountTool: MountTool = (argv, fds) =>
  new Promise((resolve, reject) => {
    const [file, ...args] = argv;
    const child = spawn(file ?? 'mount', args, { stdio: ['ignore', 'ignore', 'pipe', ...fds], timeout: TOOL_TIMEOUT_MS });
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', (err) => reject(new HandlerError('HANDLER_ERR_HOTPLUG', `${argv.join(' ')}: ${err.message}`, { cause: err })));
    child.once('close', (code, signal) => {
      if (code === 0) resolve();
      else reject(new HandlerError('HANDLER_ERR_HOTPLUG', `${argv.join(' ')}: ${stderr.trim() || `exit ${String(code ?? signal)}`}`));
    });
  });

export interface HotplugMountsOptions {
  readonly podsDir: string;
  readonly log: Logger;
  readonly tool?: MountTool;
  /** The launcher's device cgroup, for block claims; the host's cgroup v1 by default. */
  readonly devices?: DeviceAccess;
}

/** The handler's word on one hotplugged volume, merged into status.volumeStatus. */
export interface HotplugMountState {
  readonly phase: VolumePhase;
  readonly reason: string;
  readonly message: string;
}

export const HotplugMountReason = {
  Mounted: 'SuccessfulMountVolume',
  MountFailed: 'FailedMountVolume',
  Ready: 'VolumeReady',
} as const;

function mountedState(volume: string): HotplugMountState {
  return { phase: VolumePhase.MountedToPod, reason: HotplugMountReason.Mounted, message: `Volume ${volume} has been mounted in virt-launcher pod` };
}

/** After a Sync that succeeded: every wanted volume mounted into the pod is a disk of the domain now. */
export function readyStates(vmi: VirtualMachineInstance, mounted: ReadonlyMap<string, HotplugMountState> | undefined): Map<string, HotplugMountState> {
  const out = new Map(mounted);
  const hotplugged = new Set((vmi.spec.volumes ?? []).filter(isHotplugVolume).map((v) => v.name));
  for (const s of vmi.status?.volumeStatus ?? []) {
    const phase = out.get(s.name)?.phase ?? s.phase;
    if (hotplugged.has(s.name) && phase === VolumePhase.MountedToPod && s.phase === VolumePhase.MountedToPod) {
      out.set(s.name, { phase: VolumePhase.Ready, reason: HotplugMountReason.Ready, message: `Successfully attach hotplugged volume ${s.name} to VM` });
    }
  }
  return out;
}

function errnoCode(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException).code;
}

/** A device number (st_rdev) split as the kernel encodes it. */
export function splitDeviceNumber(rdev: bigint): BlockDevice {
  const major = Number(((rdev >> 8n) & 0xfffn) | ((rdev >> 32n) & 0xfffff000n));
  const minor = Number((rdev & 0xffn) | ((rdev >> 12n) & 0xffffff00n));
  return { major, minor };
}

/** mountinfo's escapes (`\040` …) undone. */
function unescape(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, oct: string) => String.fromCharCode(parseInt(oct, 8)));
}

async function mountPoints(): Promise<Set<string>> {
  const info = await readFile('/proc/self/mountinfo', 'utf8');
  return new Set(info.split('\n').flatMap((l) => {
    const t = l.split(' ')[4];
    return t === undefined ? [] : [unescape(t)];
  }));
}

/** Opens `root/…components` as a directory, refusing a symbolic link at every step. */
async function openDirNoLinks(root: string, components: readonly string[]): Promise<FileHandle> {
  let dir = await open(root, DIR_FLAGS);
  try {
    for (const name of components) {
      if (name === '' || name === '.' || name === '..' || name.includes('/')) throw new HandlerError('HANDLER_ERR_HOTPLUG', `bad path component ${JSON.stringify(name)}`);
      const at = `/proc/self/fd/${dir.fd}/${name}`;
      const next = await open(at, DIR_FLAGS).catch(async (err: unknown) => {
        if (errnoCode(err) !== 'ELOOP' && errnoCode(err) !== 'ENOTDIR') throw err;
        const link = (await lstat(at).catch(() => undefined))?.isSymbolicLink() === true;
        throw new HandlerError('HANDLER_ERR_HOTPLUG', `${join(root, ...components)}: ${name} is ${link ? 'a symbolic link' : 'not a directory'}`);
      });
      await dir.close();
      dir = next;
    }
    return dir;
  } catch (err) {
    await dir.close();
    throw err;
  }
}

export class HotplugMounts {
  readonly #o: HotplugMountsOptions;
  readonly #tool: MountTool;
  readonly #devices: DeviceAccess;
  #pods: string | undefined;
  /**
   * Launcher pods seen with no hotplugged volume wanted and none mounted: only this handler
   * mounts there, so the mount table need not be read for them again until the VMI asks for one
   * (every reconcile of every running VMI comes through here). Empty after a restart.
   */
  readonly #idle = new Set<string>();
  /** Launcher pods with a mounted volume that left the spec, waiting for a Sync to detach its disk. */
  readonly #detachDue = new Set<string>();

  constructor(o: HotplugMountsOptions) {
    this.#o = o;
    this.#tool = o.tool ?? mountTool;
    this.#devices = o.devices ?? new DeviceCgroups({ procRoot: '/proc', cgroupRoot: '/sys/fs/cgroup' });
  }

  /** The pods dir as the mount table spells it (it may be reached through a link). */
  async #podsDir(): Promise<string> {
    this.#pods ??= await realpath(this.#o.podsDir);
    return this.#pods;
  }

  /** The launcher pod's UID: the first component of its socket's path below the pods dir. */
  #podUidOf(launcherSocket: string): string | undefined {
    const rel = relative(this.#o.podsDir, launcherSocket);
    const uid = rel.split('/')[0];
    return rel.startsWith('..') || uid === undefined || uid === '' ? undefined : uid;
  }

  async #targetDir(launcherPodUid: string): Promise<string> {
    return join(await this.#podsDir(), launcherPodUid, 'volumes', 'kubernetes.io~empty-dir', HOTPLUG_DISKS_VOLUME);
  }

  /**
   * Mounts every hotplugged volume of the running VMI whose attachment pod is up (phase
   * AttachedToNode or later) and unmounts those it no longer has, once `detached` says a Sync of
   * this pass detached their disks (until then the pod is `detachDue`). Answers the handler's state of
   * each volume it acted on (MountedToPod, or Pending with the reason it cannot be yet).
   */
  async reconcile(vmi: VirtualMachineInstance, launcherSocket: string, o: { readonly detached?: boolean } = {}): Promise<Map<string, HotplugMountState>> {
    const out = new Map<string, HotplugMountState>();
    const launcherPodUid = this.#podUidOf(launcherSocket);
    if (launcherPodUid === undefined) return out;
    const wanted = new Map((vmi.spec.volumes ?? []).filter(isHotplugVolume).map((v) => [v.name, v]));
    if (wanted.size === 0 && this.#idle.has(launcherPodUid)) return out;
    this.#idle.delete(launcherPodUid);
    const statuses = new Map((vmi.status?.volumeStatus ?? []).map((s) => [s.name, s]));
    const dir = await this.#targetDir(launcherPodUid);
    if (!(await lstat(dir).then((st) => st.isDirectory(), () => false))) return out;
    const mounted = await this.#presentIn(dir);
    const removed = [...mounted.keys()].filter((volume) => !wanted.has(volume));
    // The domain may still hold a removed volume's disk until a Sync has detached it: unmounted only then.
    if (removed.length > 0 && o.detached !== true) this.#detachDue.add(launcherPodUid);
    else {
      this.#detachDue.delete(launcherPodUid);
      for (const volume of removed) await this.#takeAway(vmi.metadata.uid ?? '', launcherPodUid, launcherSocket, volume, mounted.get(volume));
      if (wanted.size === 0) this.#idle.add(launcherPodUid);
    }
    for (const name of wanted.keys()) {
      const status = statuses.get(name);
      if (mounted.has(name)) {
        // Ready (attached to the domain) is the later phase; it stays.
        if (status?.phase !== VolumePhase.Ready) out.set(name, mountedState(name));
        continue;
      }
      const attachUid = status?.hotplugVolume?.attachPodUID;
      if (attachUid === undefined || attachUid === '' || status?.phase !== VolumePhase.AttachedToNode) continue;
      try {
        await this.#mount(vmi, launcherPodUid, launcherSocket, name, attachUid, status);
        this.#o.log.info({ volume: name, attachPod: status.hotplugVolume?.attachPodName }, 'hotplug volume mounted into the launcher pod');
        out.set(name, mountedState(name));
      } catch (err) {
        this.#o.log.warn({ err, volume: name }, 'hotplug volume mount failed');
        out.set(name, { phase: VolumePhase.AttachedToNode, reason: HotplugMountReason.MountFailed, message: `mounting volume ${name} into the launcher pod: ${(err as Error).message}` });
      }
    }
    return out;
  }

  /**
   * Whether the launcher pod has a hotplugged volume mounted that left the spec and is not
   * unmounted yet: a Sync is due to detach its disk (known after a reconcile of this pod; a
   * restarted handler finds it again in the mount table on its first one).
   */
  detachDue(launcherSocket: string): boolean {
    const launcherPodUid = this.#podUidOf(launcherSocket);
    return launcherPodUid !== undefined && this.#detachDue.has(launcherPodUid);
  }

  /** Unmounts every hotplugged volume of the launcher pod (the VMI is gone or finished). */
  async unmountAll(launcherSocket: string, vmiUid: string): Promise<void> {
    const launcherPodUid = this.#podUidOf(launcherSocket);
    if (launcherPodUid === undefined) return;
    this.#detachDue.delete(launcherPodUid);
    if (this.#idle.delete(launcherPodUid)) return;
    const dir = await this.#targetDir(launcherPodUid);
    for (const [volume, kind] of await this.#presentIn(dir)) await this.#takeAway(vmiUid, launcherPodUid, launcherSocket, volume, kind, { launcherMayBeGone: true });
  }

  /** Volumes brought into `dir`: `<volume>.img` a mount point (file), `<volume>` a block device node. */
  async #presentIn(dir: string): Promise<Map<string, 'file' | 'block'>> {
    const points = await mountPoints();
    const prefix = `${dir}/`;
    const out = new Map<string, 'file' | 'block'>([...points]
      .filter((p) => p.startsWith(prefix) && p.endsWith('.img') && !p.slice(prefix.length).includes('/'))
      .map((p) => [p.slice(prefix.length, -'.img'.length), 'file']));
    for (const name of await readdir(dir).catch(() => [] as string[])) {
      if (name.startsWith('.') || name.endsWith('.img')) continue;
      if ((await lstat(join(dir, name)).catch(() => undefined))?.isBlockDevice() === true) out.set(name, 'block');
    }
    return out;
  }

  async #takeAway(vmiUid: string, launcherPodUid: string, launcherSocket: string, volume: string, kind: 'file' | 'block' | undefined, o: { readonly launcherMayBeGone?: boolean } = {}): Promise<void> {
    if (kind === 'block') await this.#removeNode(vmiUid, launcherPodUid, launcherSocket, volume, o.launcherMayBeGone === true);
    else await this.#unmount(launcherPodUid, volume);
  }

  async #mount(vmi: VirtualMachineInstance, launcherPodUid: string, launcherSocket: string, volume: string, attachUid: string, status: VolumeStatus): Promise<void> {
    const pods = await this.#podsDir();
    const at = (vmi.status?.volumeStatus ?? []).indexOf(status);
    // The launcher made its socket: its owner is the launcher's user and group.
    const owner = await lstat(launcherSocket);
    if (status.persistentVolumeClaimInfo?.volumeMode === 'Block') {
      await this.#makeNode(vmi.metadata.uid ?? '', launcherPodUid, launcherSocket, volume, attachUid, owner);
      return;
    }
    const claimDir = await this.#claimDir(pods, attachUid);
    try {
      const disk = await this.#diskImage(claimDir, vmi, volume, `status.volumeStatus[${at}]`);
      try {
        await disk.chown(owner.uid, owner.gid);
        await disk.chmod(DISK_MODE);
        const targetDir = await openDirNoLinks(pods, [launcherPodUid, 'volumes', 'kubernetes.io~empty-dir', HOTPLUG_DISKS_VOLUME]);
        try {
          const target = `/proc/self/fd/${targetDir.fd}/${volume}.img`;
          const st = await lstat(target).catch(() => undefined);
          if (st === undefined) await (await open(target, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, DISK_MODE)).close();
          else if (!st.isFile()) throw new HandlerError('HANDLER_ERR_HOTPLUG', `${volume}.img in the launcher pod's ${HOTPLUG_DISKS_VOLUME} is not a regular file`);
          // fd 3: the disk image, fd 4: the launcher pod's directory; both already checked.
          await this.#tool(['mount', '--no-canonicalize', '--bind', '/proc/self/fd/3', `/proc/self/fd/4/${volume}.img`], [disk.fd, targetDir.fd]);
        } finally {
          await targetDir.close();
        }
      } finally {
        await disk.close();
      }
    } finally {
      await claimDir.close();
    }
  }

  /**
   * The device of the attachment pod's one block claim: the kubelet's link under the pod's
   * volumeDevices is followed (it is the kubelet's, in a directory only it writes) for the
   * numbers only; nothing is opened through it.
   */
  async #claimDevice(pods: string, attachUid: string): Promise<BlockDevice> {
    const found: [string, string][] = [];
    for (const plugin of BLOCK_PLUGINS) {
      for (const e of await readdir(join(pods, attachUid, 'volumeDevices', plugin)).catch(() => [] as string[])) found.push([plugin, e]);
    }
    const [only, ...more] = found;
    if (only === undefined || more.length > 0) {
      throw new HandlerError('HANDLER_ERR_HOTPLUG', only === undefined ? `attachment pod ${attachUid} shows no block claim on this node yet` : `attachment pod ${attachUid} shows ${found.length} block claims; it must map exactly one`);
    }
    const dir = await openDirNoLinks(pods, [attachUid, 'volumeDevices', only[0]]);
    try {
      const st = await stat(`/proc/self/fd/${dir.fd}/${only[1]}`, { bigint: true });
      if (!st.isBlockDevice()) throw new HandlerError('HANDLER_ERR_HOTPLUG', `${join(attachUid, 'volumeDevices', ...only)} is not a block device`);
      return splitDeviceNumber(st.rdev);
    } finally {
      await dir.close();
    }
  }

  /**
   * Allows the device in the launcher's device cgroup, then makes its node in the launcher pod's
   * hotplug-disks: made and owned under a temporary name, renamed into place last, so a node
   * named `<volume>` is always a finished one.
   */
  async #makeNode(vmiUid: string, launcherPodUid: string, launcherSocket: string, volume: string, attachUid: string, owner: { readonly uid: number; readonly gid: number }): Promise<void> {
    const pods = await this.#podsDir();
    const device = await this.#claimDevice(pods, attachUid);
    await this.#devices.allow(vmiUid, launcherSocket, device);
    const targetDir = await openDirNoLinks(pods, [launcherPodUid, 'volumes', 'kubernetes.io~empty-dir', HOTPLUG_DISKS_VOLUME]);
    try {
      const at = `/proc/self/fd/${targetDir.fd}`;
      const temporary = `.${volume}.new`;
      await rm(`${at}/${temporary}`, { force: true });
      await this.#tool(['mknod', '-m', DISK_MODE.toString(8), `/proc/self/fd/3/${temporary}`, 'b', String(device.major), String(device.minor)], [targetDir.fd]);
      await lchown(`${at}/${temporary}`, owner.uid, owner.gid);
      await rename(`${at}/${temporary}`, `${at}/${volume}`);
      // What is in place now must be that node (the directory is the launcher's too).
      const st = await lstat(`${at}/${volume}`, { bigint: true });
      const seen = st.isBlockDevice() ? splitDeviceNumber(st.rdev) : undefined;
      if (seen?.major !== device.major || seen.minor !== device.minor || Number(st.uid) !== owner.uid) {
        await rm(`${at}/${volume}`, { force: true });
        throw new HandlerError('HANDLER_ERR_HOTPLUG', `${volume} in the launcher pod's ${HOTPLUG_DISKS_VOLUME} changed while it was made`);
      }
    } finally {
      await targetDir.close();
    }
  }

  /**
   * Denies the node's device in the launcher's device cgroup (unless another hotplugged node of
   * the pod is the same device), then removes the node. The launcher may be gone already when
   * the VMI is: its cgroup went with it, and the node is removed all the same.
   */
  async #removeNode(vmiUid: string, launcherPodUid: string, launcherSocket: string, volume: string, launcherMayBeGone: boolean): Promise<void> {
    const pods = await this.#podsDir();
    const targetDir = await openDirNoLinks(pods, [launcherPodUid, 'volumes', 'kubernetes.io~empty-dir', HOTPLUG_DISKS_VOLUME]);
    try {
      const at = `/proc/self/fd/${targetDir.fd}`;
      const st = await lstat(`${at}/${volume}`, { bigint: true }).catch(() => undefined);
      if (st?.isBlockDevice() === true) {
        const device = splitDeviceNumber(st.rdev);
        let shared = false;
        for (const name of await readdir(at)) {
          if (name === volume || name.startsWith('.')) continue;
          const other = await lstat(`${at}/${name}`, { bigint: true }).catch(() => undefined);
          if (other?.isBlockDevice() === true && other.rdev === st.rdev) shared = true;
        }
        if (!shared) {
          await this.#devices.deny(vmiUid, launcherSocket, device).catch((err: unknown) => {
            if (!launcherMayBeGone) throw err;
            this.#o.log.debug({ err, volume }, 'device not denied: the launcher is gone');
          });
        }
      }
      await rm(`${at}/${volume}`, { force: true });
      this.#o.log.info({ volume }, 'hotplug block volume removed from the launcher pod');
    } finally {
      await targetDir.close();
    }
  }

  /** The one claim directory of the attachment pod (it mounts nothing else). */
  async #claimDir(pods: string, attachUid: string): Promise<FileHandle> {
    const found: string[][] = [];
    for (const [plugin, sub] of Object.entries(CLAIM_PLUGINS)) {
      const entries = await readdir(join(pods, attachUid, 'volumes', plugin)).catch(() => [] as string[]);
      for (const e of entries) found.push(['volumes', plugin, e, ...(sub === '' ? [] : [sub])]);
    }
    if (found.length !== 1) {
      throw new HandlerError('HANDLER_ERR_HOTPLUG', found.length === 0 ? `attachment pod ${attachUid} shows no claim on this node yet` : `attachment pod ${attachUid} shows ${found.length} claims; it must mount exactly one`);
    }
    return openDirNoLinks(pods, [attachUid, ...(found[0] ?? [])]);
  }

  /** The claim's disk.img, opened read-write; made sparse at the claim's size when missing. */
  async #diskImage(claimDir: FileHandle, vmi: VirtualMachineInstance, volume: string, field: string): Promise<FileHandle> {
    const path = `/proc/self/fd/${claimDir.fd}/${DISK_IMAGE}`;
    let disk: FileHandle;
    try {
      disk = await open(path, constants.O_RDWR | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    } catch (err) {
      if (errnoCode(err) === 'ELOOP') throw new HandlerError('HANDLER_ERR_HOTPLUG', `the claim's ${DISK_IMAGE} is a symbolic link`);
      if (errnoCode(err) !== 'ENOENT') throw err;
      const size = claimDiskSize(vmi, volume, field);
      if (size === undefined) throw new HandlerError('HANDLER_ERR_HOTPLUG', `the claim has no ${DISK_IMAGE} and ${field} records no size to make one`);
      disk = await open(path, constants.O_RDWR | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, DISK_MODE);
      await disk.truncate(Number(size)).catch(async (err: unknown) => {
        await disk.close();
        throw err;
      });
    }
    const st = await disk.stat();
    if (!st.isFile()) {
      await disk.close();
      throw new HandlerError('HANDLER_ERR_HOTPLUG', `the claim's ${DISK_IMAGE} is not a regular file`);
    }
    return disk;
  }

  async #unmount(launcherPodUid: string, volume: string): Promise<void> {
    const pods = await this.#podsDir();
    // Checked for links first; the mount table names the target by its real path.
    const targetDir = await openDirNoLinks(pods, [launcherPodUid, 'volumes', 'kubernetes.io~empty-dir', HOTPLUG_DISKS_VOLUME]);
    try {
      await this.#tool(['umount', join(await this.#targetDir(launcherPodUid), `${volume}.img`)], []);
      await rm(`/proc/self/fd/${targetDir.fd}/${volume}.img`, { force: true });
      this.#o.log.info({ volume }, 'hotplug volume unmounted from the launcher pod');
    } finally {
      await targetDir.close();
    }
  }
}
