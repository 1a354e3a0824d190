// The size of a filesystem claim's disk.img, from what the controller recorded of the claim in
// status.volumeStatus (KubeVirt's persistentVolumeClaimInfo): the smaller of its request and its
// capacity, down to whole MiB, as KubeVirt's launcher sizes the host disk that stands for it.
// The launcher sizes a boot claim's image with it, podvirt-handler a hotplugged claim's.

import { parseQuantityValue } from './quantity.js';
import { toBytes } from './quantity-math.js';
import type { VolumeStatus } from './types/status.js';
import { VmiInvalidError } from './vmi-invalid-error.js';

const MIB = 1024n * 1024n;

function bytes(value: unknown, field: string): bigint {
  try {
    return toBytes(parseQuantityValue(value as string));
  } catch (err) {
    throw VmiInvalidError.at(field, 'Invalid', `invalid quantity ${JSON.stringify(value)}: ${(err as Error).message}`);
  }
}

/** undefined when the status records nothing of the claim (the image must then exist). */
export function claimDiskSize(vmi: { status?: { volumeStatus?: VolumeStatus[] } | undefined }, volume: string, field: string): bigint | undefined {
  const statuses = vmi.status?.volumeStatus ?? [];
  const at = statuses.findIndex((s) => s.name === volume);
  const info = statuses[at]?.persistentVolumeClaimInfo;
  if (info === undefined) return undefined;
  const statusField = `status.volumeStatus[${at}].persistentVolumeClaimInfo`;
  const capacity = info.capacity?.['storage'];
  const request = info.requests?.['storage'];
  const sizes = [
    capacity === undefined ? undefined : bytes(capacity, `${statusField}.capacity.storage`),
    request === undefined ? undefined : bytes(request, `${statusField}.requests.storage`),
  ].filter((b): b is bigint => b !== undefined);
  if (sizes.length === 0) throw VmiInvalidError.at(field, 'Invalid', `claim of volume ${volume} reports neither a capacity nor a request`);
  const size = (sizes.reduce((a, b) => (a < b ? a : b)) / MIB) * MIB;
  if (size === 0n) throw VmiInvalidError.at(field, 'Invalid', `claim of volume ${volume} is smaller than 1Mi; a disk needs at least 1Mi`);
  return size;
}
