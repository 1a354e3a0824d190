import { join } from 'node:path';
import {
  toBytes,
  VmiInvalidError,
  type CloudInitNoCloudSource,
  type DefaultedVmi,
  type LocalObjectReference,
  type Volume,
} from '@podvirt/api';
import type { ConverterContext } from './context.js';
import { persistentVolumeClaim } from './persistent-volume-claim.js';
import type { DataSource, PrepareStep } from './prepare-step.js';
import type { VolumeSource } from './volume-source.js';
import { LauncherError } from '../errors.js';

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
  if (volume.persistentVolumeClaim !== undefined) return persistentVolumeClaim(name, volume.persistentVolumeClaim, `${field}.persistentVolumeClaim`, ctx);
  if (volume.hostDisk !== undefined) return hostDisk(volume.hostDisk.shared === true, name, `${field}.hostDisk`, ctx);
  throw new LauncherError('LAUNCHER_ERR_VOLUME', `volume ${name} has no source: decodeVmi lets none through`);
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

/** The pod mounts the path's directory; the inspect step opened the file confined to it. */
function hostDisk(shared: boolean, name: string, field: string, ctx: ConverterContext): VolumeSource {
  const disk = ctx.persistentDisks.get(name);
  if (disk === undefined) throw VmiInvalidError.at(`${field}.path`, 'NotFound', `the host disk of volume ${name} was not opened`);
  return { path: disk.path, format: 'raw', persistent: true, ...(shared ? { shareable: true } : {}) };
}
