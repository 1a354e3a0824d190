// The size of a new PVC or hostDisk image, as KubeVirt's host-disk creator chooses it: a
// filesystem gives its volume less than the claim asked for (metadata, reserved blocks); a
// shortfall of up to 10 % is tolerated and the image shrinks to what is free, beyond that the
// start fails. (KubeVirt's filesystem overhead plays no part here: it only bounds how far an
// existing image may later be expanded, and podvirt does not expand volumes.)

import { LauncherError } from '../errors.js';

/** KubeVirt's defaults: tolerate 10 % less space; keep 128 KiB of the volume free. */
export const LESS_SPACE_TOLERATION_PERCENT = 10n;
export const MINIMUM_RESERVE_BYTES = 131_072n;

/** `64Mi` for whole MiB, else bytes: as messages show sizes. */
export function formatBytes(n: bigint): string {
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
