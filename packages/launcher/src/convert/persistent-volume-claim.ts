// A PVC volume as KubeVirt's launcher sees it: a filesystem claim is a directory the pod mounts
// at `<private>/vmi-disks/<volume>/`, holding the VM's disk as `disk.img` (created sparse at the
// claim's size when missing); a block claim is the device the pod puts at `/dev/<volume>`.

import { join } from 'node:path';
import { parseQuantityValue, toBytes, VmiInvalidError, type DefaultedVmi, type PersistentVolumeClaimSource } from '@podvirt/api';
import type { ConverterContext } from './context.js';
import type { VolumeSource } from './volumes.js';

const MIB = 1024n * 1024n;

function bytes(value: unknown, field: string): bigint {
  try {
    return toBytes(parseQuantityValue(value as string));
  } catch (err) {
    throw VmiInvalidError.at(field, 'Invalid', `invalid quantity ${JSON.stringify(value)}: ${(err as Error).message}`);
  }
}

/** The disk image's size: the smaller of the claim's request and its capacity, down to whole MiB (KubeVirt's rule). */
export function claimDiskSize(vmi: DefaultedVmi, volume: string, field: string): bigint | undefined {
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

export function persistentVolumeClaim(vmi: DefaultedVmi, name: string, pvc: PersistentVolumeClaimSource, field: string, ctx: ConverterContext): VolumeSource {
  const readonly = pvc.readOnly === true;
  const what = `claim ${pvc.claimName}`;
  const mode = ctx.volumeModes.get(name);
  if (mode === 'block') {
    const path = join(ctx.devDir, name);
    return { path, format: 'raw', block: true, readonly, persistent: true, discard: 'unmap', prepare: { kind: 'blockDevice', root: ctx.devDir, path, what } };
  }
  if (mode !== 'filesystem') {
    throw VmiInvalidError.at(field, 'NotFound', `the pod has neither a device at ${join(ctx.devDir, name)} nor a mount at ${join(ctx.vmiDisksDir, name)} for claim ${pvc.claimName}`);
  }
  const root = join(ctx.vmiDisksDir, name);
  const path = join(root, 'disk.img');
  const sizeBytes = claimDiskSize(vmi, name, field);
  // A read-only claim's image must exist already; a writable one is created at the claim's size.
  const sizes = sizeBytes === undefined ? {} : readonly ? { maxBytes: sizeBytes } : { sizeBytes, maxBytes: sizeBytes };
  return { path, format: 'raw', readonly, persistent: true, discard: 'unmap', prepare: { kind: 'diskImage', root, path, what, ...sizes } };
}
