import { join, normalize } from 'node:path';
import {
  toBytes,
  VmiInvalidError,
  type CloudInitNoCloudSource,
  type DefaultedVmi,
  type HostDiskSource,
  type LocalObjectReference,
  type Volume,
} from '@podvirt/api';
import type { ConverterContext } from './context.js';
import { persistentVolumeClaim } from './persistent-volume-claim.js';
import type { DataSource, PrepareStep } from './prepare-step.js';

/** What a disk needs to know about its volume: the file qemu opens and how. */
export interface VolumeSource {
  readonly path: string;
  readonly format: 'raw' | 'qcow2';
  readonly backing?: { readonly path: string; readonly format: 'raw' | 'qcow2' };
  readonly discard?: 'unmap';
  readonly shareable?: boolean;
  /** A block device (`<disk type="block">`), not a file. */
  readonly block?: boolean;
  readonly readonly?: boolean;
  /** PVC: cache and io get KubeVirt's defaults from the disk's O_DIRECT support. */
  readonly persistent?: boolean;
  /** Files to create before the domain starts; none for a host disk, opened by the inspect step. */
  readonly prepare?: PrepareStep;
}

/** decodeVmi guarantees exactly one supported source per volume. */
export function convertVolume(vmi: DefaultedVmi, volume: Volume, index: number, ctx: ConverterContext): VolumeSource {
  const field = `spec.volumes[${index}]`;
  const name = volume.name;
  if (volume.containerDisk !== undefined) {
    const image = ctx.containerDisks.get(name);
    if (image === undefined) throw VmiInvalidError.at(`${field}.containerDisk.image`, 'NotFound', `no image file found for volume ${name}`);
    const path = join(ctx.ephemeralDiskDir, 'disk-data', name, 'disk.qcow2');
    return {
      path,
      format: 'qcow2',
      backing: image,
      discard: 'unmap',
      prepare: { kind: 'overlay', path, backingFile: image.path, backingFormat: image.format },
    };
  }
  if (volume.emptyDisk !== undefined) {
    const sizeBytes = toBytes(volume.emptyDisk.capacity);
    const path = join(ctx.libvirtRunDir, 'empty-disks', `${name}.img`);
    return { path, format: 'raw', discard: 'unmap', prepare: { kind: 'emptyDisk', path, sizeBytes, field: `${field}.emptyDisk.capacity` } };
  }
  if (volume.cloudInitNoCloud !== undefined) return cloudInit(vmi, volume.cloudInitNoCloud, name, ctx);
  if (volume.persistentVolumeClaim !== undefined) return persistentVolumeClaim(vmi, name, volume.persistentVolumeClaim, `${field}.persistentVolumeClaim`, ctx);
  if (volume.hostDisk !== undefined) return hostDisk(volume.hostDisk, name, `${field}.hostDisk`, ctx);
  throw new Error(`volume ${name} has no source: decodeVmi lets none through`);
}

function cloudInit(vmi: DefaultedVmi, ci: CloudInitNoCloudSource, volume: string, ctx: ConverterContext): VolumeSource {
  const ns = vmi.metadata.namespace ?? '';
  const name = vmi.metadata.name ?? '';
  const userData = dataSource(ci.userData, ci.userDataBase64, ci.secretRef, ['userdata', 'userData']);
  const networkData = dataSource(ci.networkData, ci.networkDataBase64, ci.networkDataSecretRef, ['networkdata', 'networkData']);
  const path = join(ctx.libvirtRunDir, 'cloud-init-dir', ns, name, 'noCloud.iso');
  const prepare: PrepareStep = {
    kind: 'cloudInitNoCloud',
    path,
    volume,
    ...(userData !== undefined ? { userData } : {}),
    ...(networkData !== undefined ? { networkData } : {}),
    instanceId: `${name}.${ns}`,
    hostname: name,
  };
  return { path, format: 'raw', prepare };
}

/** The one form given (decodeVmi refuses two); an empty string is Go's unset. */
function dataSource(
  inline: string | undefined,
  base64: string | undefined,
  secret: LocalObjectReference | undefined,
  keys: readonly string[],
): DataSource | undefined {
  if (inline) return { inline };
  if (base64) return { base64 };
  if (secret) return { secret: secret.name, keys };
  return undefined;
}

/** The path is absolute and free of `..` (decodeVmi); whether this launcher may open it is its own rule. */
function hostDisk(hd: HostDiskSource, name: string, field: string, ctx: ConverterContext): VolumeSource {
  const path = normalize(hd.path);
  const allowed = ctx.hostDiskPrefixes.some((p) => path === p || path.startsWith(p.endsWith('/') ? p : `${p}/`));
  if (!allowed) {
    throw VmiInvalidError.at(`${field}.path`, 'Forbidden', `${path} is outside the allowed host disk directories (${ctx.hostDiskPrefixes.join(', ') || 'none'})`);
  }
  // The inspect step opened the file confined to its directory; libvirt gets that open file's path.
  const opened = ctx.hostDisks.get(name);
  if (opened === undefined) throw VmiInvalidError.at(`${field}.path`, 'NotFound', `${path} was not opened`);
  return { path: opened, format: 'raw', shareable: hd.shared === true };
}
