import { join, normalize } from 'node:path';
import { InvalidVmiError } from '../errors.js';
import type { CloudInitNoCloud, Vmi, Volume } from '../vmi.js';
import type { ConverterContext } from './context.js';
import type { DataSource, PrepareStep } from './prepare-step.js';
import { quantityToBytes } from './quantity.js';

/** What a disk needs to know about its volume: the file qemu opens and how. */
export interface VolumeSource {
  readonly path: string;
  readonly format: 'raw' | 'qcow2';
  readonly backing?: { readonly path: string; readonly format: 'raw' | 'qcow2' };
  readonly discard?: 'unmap';
  readonly shareable?: boolean;
  /** Files to create before the domain starts; none for a host disk, opened by the inspect step. */
  readonly prepare?: PrepareStep;
}

const SOURCES = ['containerDisk', 'emptyDisk', 'cloudInitNoCloud', 'hostDisk'] as const;

export function convertVolume(vmi: Vmi, volume: Volume, index: number, ctx: ConverterContext): VolumeSource {
  const field = `spec.volumes[${index}]`;
  const present = SOURCES.filter((s) => volume[s] !== undefined);
  if (present.length !== 1) {
    throw new InvalidVmiError(field, `exactly one volume source is required (supported: ${SOURCES.join(', ')}), found ${present.length}`);
  }
  const name = volume.name ?? '';
  if (volume.containerDisk !== undefined) {
    const image = ctx.containerDisks.get(name);
    if (image === undefined) throw new InvalidVmiError(`${field}.containerDisk.image`, `no image file found for volume ${name}`);
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
    const sizeBytes = quantityToBytes(volume.emptyDisk.capacity, `${field}.emptyDisk.capacity`);
    const path = join(ctx.libvirtRunDir, 'empty-disks', `${name}.img`);
    return { path, format: 'raw', discard: 'unmap', prepare: { kind: 'emptyDisk', path, sizeBytes } };
  }
  if (volume.cloudInitNoCloud !== undefined) return cloudInit(vmi, volume.cloudInitNoCloud, name, `${field}.cloudInitNoCloud`, ctx);
  return hostDisk(volume.hostDisk ?? {}, name, `${field}.hostDisk`, ctx);
}

function cloudInit(vmi: Vmi, ci: CloudInitNoCloud, volume: string, field: string, ctx: ConverterContext): VolumeSource {
  const ns = vmi.metadata?.namespace ?? '';
  const name = vmi.metadata?.name ?? '';
  const userData = dataSource(ci.userData, ci.userDataBase64, ci.secretRef, `${field}.userData`, ['userdata', 'userData']);
  const networkData = dataSource(ci.networkData, ci.networkDataBase64, ci.networkDataSecretRef, `${field}.networkData`, [
    'networkdata',
    'networkData',
  ]);
  if (userData === undefined && networkData === undefined) throw new InvalidVmiError(field, 'userData or networkData is required');
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

function dataSource(
  inline: unknown,
  base64: unknown,
  secret: { name?: string } | undefined,
  field: string,
  keys: readonly string[],
): DataSource | undefined {
  const given = [inline, base64, secret].filter((v) => v !== undefined).length;
  if (given > 1) throw new InvalidVmiError(field, 'give only one of the plain, Base64 and secret reference forms');
  if (typeof inline === 'string') return { inline };
  if (typeof base64 === 'string') {
    if (!/^[A-Za-z0-9+/\s]*={0,2}\s*$/.test(base64)) throw new InvalidVmiError(`${field}Base64`, 'not valid base64');
    return { base64 };
  }
  if (secret !== undefined) {
    const refField = field.endsWith('userData') ? field.replace(/userData$/, 'secretRef') : `${field}SecretRef`;
    if (typeof secret.name !== 'string' || secret.name === '') throw new InvalidVmiError(`${refField}.name`, 'required');
    return { secret: secret.name, keys };
  }
  if (inline !== undefined || base64 !== undefined) throw new InvalidVmiError(field, 'must be a string');
  return undefined;
}

function hostDisk(hd: NonNullable<Volume['hostDisk']>, name: string, field: string, ctx: ConverterContext): VolumeSource {
  if (typeof hd.path !== 'string' || !hd.path.startsWith('/')) throw new InvalidVmiError(`${field}.path`, 'an absolute path is required');
  const path = normalize(hd.path);
  const allowed = ctx.hostDiskPrefixes.some((p) => path === p || path.startsWith(p.endsWith('/') ? p : `${p}/`));
  if (!allowed) {
    throw new InvalidVmiError(`${field}.path`, `${path} is outside the allowed host disk directories (${ctx.hostDiskPrefixes.join(', ') || 'none'})`);
  }
  if (hd.type !== 'Disk' && hd.type !== 'DiskOrCreate') throw new InvalidVmiError(`${field}.type`, 'must be Disk or DiskOrCreate');
  if (hd.type === 'DiskOrCreate') quantityToBytes(hd.capacity, `${field}.capacity`);
  // The inspect step opened the file confined to its directory; libvirt gets that open file's path.
  const opened = ctx.hostDisks.get(name);
  if (opened === undefined) throw new InvalidVmiError(`${field}.path`, `${path} was not opened`);
  return { path: opened, format: 'raw', shareable: hd.shared === true };
}
