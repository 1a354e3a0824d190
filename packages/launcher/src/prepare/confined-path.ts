// The one check that a disk the launcher hands to qemu lies inside a mount of its own pod:
// symlinks and `..` are resolved, and the real path must stay under the mount's real path and be
// a regular file (or a block device, for block claims). Every persistent disk goes through here.

import { constants } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import { dirname, sep } from 'node:path';
import { LauncherError } from '../errors.js';

export type DiskKind = 'file' | 'block';

function inside(root: string, real: string): boolean {
  return real === root || real.startsWith(root.endsWith(sep) ? root : root + sep);
}

function volumeError(message: string, cause?: unknown): LauncherError {
  return new LauncherError('LAUNCHER_ERR_VOLUME', message, cause === undefined ? undefined : { cause });
}

async function realRoot(root: string, what: string): Promise<string> {
  try {
    return await realpath(root);
  } catch (err) {
    throw volumeError(`${what}: ${root} is not mounted in this pod`, err);
  }
}

/**
 * The real path of `path`, checked to lie under `root` and be of `kind`; undefined when it does
 * not exist yet (its directory is then checked instead, so that creating it is safe with O_EXCL
 * and O_NOFOLLOW).
 */
export async function confinedDiskPath(root: string, path: string, kind: DiskKind, what: string): Promise<string | undefined> {
  const top = await realRoot(root, what);
  let real: string;
  try {
    real = await realpath(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw volumeError(`${what}: cannot resolve ${path}: ${(err as Error).message}`, err);
    const dir = await realpath(dirname(path)).catch(() => undefined);
    if (dir === undefined || !inside(top, dir)) throw volumeError(`${what}: ${path} lies outside the pod's mount ${root}`);
    return undefined;
  }
  if (!inside(top, real)) throw volumeError(`${what}: ${path} resolves to ${real}, outside the pod's mount ${root}`);
  const st = await stat(real);
  if (kind === 'file' && !st.isFile()) throw volumeError(`${what}: ${path} is not a regular file`);
  if (kind === 'block' && !st.isBlockDevice()) throw volumeError(`${what}: ${path} is not a block device (is the claim's volumeMode Block?)`);
  return real;
}

/** Flags for creating a disk image inside a checked directory: never through a symlink, never over a file. */
export const CREATE_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
