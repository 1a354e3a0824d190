// What the pod gives each persistent volume, found before converting: whether a PVC arrives as
// a block device (`/dev/<volume>`) or a mounted directory, and whether each PVC disk takes O_DIRECT (KubeVirt's cache default hinges on it) and is fully allocated (io).

import { constants } from 'node:fs';
import { lstat, open, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { DiskIoSupport } from '../convert/context.js';
import type { DefaultedVmi } from '@podvirt/api';
import { confinedDiskPath } from './confined-path.js';

export interface VolumeInspection {
  readonly volumeModes: ReadonlyMap<string, 'block' | 'filesystem'>;
  readonly diskIo: ReadonlyMap<string, DiskIoSupport>;
}

async function modeOf(vmiDisksDir: string, devDir: string, volume: string): Promise<'block' | 'filesystem' | undefined> {
  const dev = await lstat(join(devDir, volume)).catch(() => undefined);
  if (dev?.isBlockDevice() === true) return 'block';
  const dir = await stat(join(vmiDisksDir, volume)).catch(() => undefined);
  return dir?.isDirectory() === true ? 'filesystem' : undefined;
}

/** Opens with O_DIRECT (read-only; a probe file in the directory when the image does not exist yet). */
async function directIo(path: string, exists: boolean): Promise<boolean> {
  const probe = exists ? path : join(path, '..', `.podvirt-direct-io-${process.pid}`);
  const flags = constants.O_RDONLY | constants.O_DIRECT | constants.O_NOFOLLOW | (exists ? 0 : constants.O_CREAT | constants.O_EXCL);
  try {
    const fh = await open(probe, flags, 0o600);
    await fh.close();
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EINVAL') return false;
    throw err;
  } finally {
    if (!exists) await rm(probe, { force: true });
  }
}

async function support(root: string, path: string, block: boolean, what: string): Promise<DiskIoSupport | undefined> {
  // A disk outside the pod's mounts is reported by the prepare step; nothing is opened here.
  const real = await confinedDiskPath(root, path, block ? 'block' : 'file', what).catch(() => null);
  if (real === null) return undefined;
  const st = real === undefined ? undefined : await stat(real);
  const preallocated = st !== undefined && !block && st.blocks * 512 >= st.size;
  return { directIo: await directIo(real ?? path, real !== undefined), preallocated };
}

export async function inspectVolumes(vmi: DefaultedVmi, vmiDisksDir: string, devDir: string): Promise<VolumeInspection> {
  const volumeModes = new Map<string, 'block' | 'filesystem'>();
  const diskIo = new Map<string, DiskIoSupport>();
  for (const volume of vmi.spec.volumes ?? []) {
    const name = volume.name;
    if (name === '' || name.includes('/') || name === '..') continue;
    if (volume.persistentVolumeClaim !== undefined) {
      const mode = await modeOf(vmiDisksDir, devDir, name);
      if (mode === undefined) continue;
      volumeModes.set(name, mode);
      const [root, path] = mode === 'block' ? [devDir, join(devDir, name)] : [join(vmiDisksDir, name), join(vmiDisksDir, name, 'disk.img')];
      const s = await support(root, path, mode === 'block', `volume ${name}`);
      if (s !== undefined) diskIo.set(name, s);
    }
  }
  return { volumeModes, diskIo };
}
