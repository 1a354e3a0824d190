// The raw image of a PVC or hostDisk volume, as KubeVirt's launcher makes it: kept when present
// (after checking it fits its claim), else created sparse at the requested size. A filesystem
// gives its volume less than the claim asked for (metadata, reserved blocks); a shortfall of up
// to 10 % is tolerated and the image shrinks to what is free, beyond that the start fails.

import { open, stat, statfs } from 'node:fs/promises';
import type { Logger } from 'pino';
import { LauncherError } from '../errors.js';
import { confinedDiskPath, CREATE_FLAGS } from './confined-path.js';

/** KubeVirt's defaults: tolerate 10 % less space; keep 128 KiB of the volume free. */
export const LESS_SPACE_TOLERATION_PERCENT = 10n;
export const MINIMUM_RESERVE_BYTES = 131_072n;

export interface DiskImageRequest {
  readonly root: string;
  readonly path: string;
  readonly what: string;
  readonly sizeBytes?: bigint;
  readonly maxBytes?: bigint;
}

function formatBytes(n: bigint): string {
  const mib = 1024n * 1024n;
  return n % mib === 0n ? `${n / mib}Mi` : `${n} bytes`;
}

/** The size to create: the request, or the free space when that is short by at most the toleration. */
export function fittedSize(requested: bigint, available: bigint, what: string): bigint {
  if (requested <= available) return requested;
  const tolerated = (requested * (100n - LESS_SPACE_TOLERATION_PERCENT)) / 100n;
  if (tolerated > available) {
    throw new LauncherError('LAUNCHER_ERR_VOLUME', `${what}: not enough space for a ${formatBytes(requested)} disk image: ${formatBytes(available)} free, even with ${LESS_SPACE_TOLERATION_PERCENT}% toleration`);
  }
  return available;
}

export async function ensureDiskImage(req: DiskImageRequest, log?: Logger): Promise<void> {
  const real = await confinedDiskPath(req.root, req.path, 'file', req.what);
  if (real !== undefined) {
    const size = BigInt((await stat(real)).size);
    if (req.maxBytes !== undefined && size > req.maxBytes) {
      throw new LauncherError('LAUNCHER_ERR_VOLUME', `${req.what}: the disk image ${req.path} (${formatBytes(size)}) is larger than the claim (${formatBytes(req.maxBytes)})`);
    }
    return;
  }
  if (req.sizeBytes === undefined) throw new LauncherError('LAUNCHER_ERR_VOLUME', `${req.what}: the disk image ${req.path} does not exist`);
  const fs = await statfs(req.root);
  const free = BigInt(fs.bavail) * BigInt(fs.bsize) - MINIMUM_RESERVE_BYTES;
  const size = fittedSize(req.sizeBytes, free < 0n ? 0n : free, req.what);
  if (size !== req.sizeBytes) log?.warn({ requested: String(req.sizeBytes), size: String(size), volume: req.what }, 'volume smaller than requested, within toleration');
  const fh = await open(req.path, CREATE_FLAGS, 0o660);
  try {
    await fh.truncate(Number(size));
  } finally {
    await fh.close();
  }
}

export async function checkBlockDevice(root: string, path: string, what: string): Promise<void> {
  const real = await confinedDiskPath(root, path, 'block', what);
  if (real === undefined) throw new LauncherError('LAUNCHER_ERR_VOLUME', `${what}: no block device at ${path} (is the claim's volumeMode Filesystem?)`);
}
