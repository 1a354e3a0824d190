import { InvalidVmiError } from '../errors.js';
import type { Disk, Vmi } from '../vmi.js';
import type { ConverterContext } from './context.js';
import type { PrepareStep } from './prepare-step.js';
import { convertVolume, type VolumeSource } from './volumes.js';
import { el, type XmlElement } from './xml.js';

const BUSES = new Set(['virtio', 'sata', 'scsi', 'usb']);
const CACHES = new Set(['none', 'writethrough', 'writeback']);

export interface ConvertedDisks {
  readonly disks: XmlElement[];
  readonly controllers: XmlElement[];
  readonly prepare: PrepareStep[];
}

/** Disk letters in order per prefix: vda, vdb … (virtio) and sda, sdb … (sata, scsi, usb). */
function devName(prefix: string, n: number): string {
  let s = '';
  for (let i = n; i >= 0; i = Math.floor(i / 26) - 1) s = String.fromCharCode(97 + (i % 26)) + s;
  return prefix + s;
}

/** Every disk joined with its volume; the volume family decides the file, the disk how the guest sees it. */
export function convertDisks(vmi: Vmi, ctx: ConverterContext): ConvertedDisks {
  const disks = vmi.spec?.domain?.devices?.disks ?? [];
  const volumes = vmi.spec?.volumes ?? [];
  uniqueNames(disks, 'spec.domain.devices.disks');
  uniqueNames(volumes, 'spec.volumes');
  const used = new Set<string>();
  const counters = { vd: 0, sd: 0 };
  const out: XmlElement[] = [];
  const prepare: PrepareStep[] = [];
  const buses = new Set<string>();
  disks.forEach((disk, i) => {
    const field = `spec.domain.devices.disks[${i}]`;
    const vi = volumes.findIndex((v) => v.name === disk.name);
    const volume = volumes[vi];
    if (volume === undefined) throw new InvalidVmiError(`${field}.name`, `no volume named ${JSON.stringify(disk.name)}`);
    used.add(disk.name ?? '');
    const source = convertVolume(vmi, volume, vi, ctx);
    const { bus, element } = diskElement(disk, field, source, counters);
    buses.add(bus);
    out.push(element);
    if (source.prepare !== undefined) prepare.push(source.prepare);
  });
  volumes.forEach((v, i) => {
    if (!used.has(v.name ?? '')) throw new InvalidVmiError(`spec.volumes[${i}].name`, `volume ${JSON.stringify(v.name)} has no disk`);
  });
  const controllers = [
    el('controller', { type: 'usb', model: buses.has('usb') ? 'qemu-xhci' : 'none' }),
    buses.has('scsi') && el('controller', { type: 'scsi', index: 0, model: 'virtio-non-transitional' }),
  ].filter((c): c is XmlElement => c !== false);
  return { disks: out, controllers, prepare };
}

function uniqueNames(items: readonly { name?: string }[], field: string): void {
  const seen = new Set<string>();
  items.forEach((item, i) => {
    if (typeof item.name !== 'string' || item.name === '') throw new InvalidVmiError(`${field}[${i}].name`, 'required');
    if (seen.has(item.name)) throw new InvalidVmiError(`${field}[${i}].name`, `duplicate name ${JSON.stringify(item.name)}`);
    seen.add(item.name);
  });
}

function diskElement(disk: Disk, field: string, source: VolumeSource, counters: { vd: number; sd: number }): { bus: string; element: XmlElement } {
  if (disk.disk !== undefined && disk.cdrom !== undefined) throw new InvalidVmiError(field, 'set either disk or cdrom, not both');
  const cdrom = disk.cdrom !== undefined;
  const target = (cdrom ? disk.cdrom : disk.disk) ?? {};
  const bus = target.bus ?? (cdrom ? 'sata' : 'virtio');
  const busField = `${field}.${cdrom ? 'cdrom' : 'disk'}.bus`;
  if (!BUSES.has(bus)) throw new InvalidVmiError(busField, `unsupported bus ${JSON.stringify(bus)} (supported: ${[...BUSES].join(', ')})`);
  if (cdrom && bus === 'virtio') throw new InvalidVmiError(busField, 'a cdrom cannot use the virtio bus');
  const tray = disk.cdrom?.tray;
  if (tray !== undefined && tray !== 'open' && tray !== 'closed') throw new InvalidVmiError(`${field}.cdrom.tray`, 'must be open or closed');
  if (disk.cache !== undefined && !CACHES.has(disk.cache)) throw new InvalidVmiError(`${field}.cache`, `unsupported cache mode ${JSON.stringify(disk.cache)}`);
  if (disk.bootOrder !== undefined && (!Number.isInteger(disk.bootOrder) || disk.bootOrder < 1)) {
    throw new InvalidVmiError(`${field}.bootOrder`, 'must be a positive integer');
  }
  const prefix = bus === 'virtio' ? 'vd' : 'sd';
  const dev = devName(prefix, counters[prefix]++);
  const readonly = cdrom ? target.readonly !== false : target.readonly === true;
  const element = el(
    'disk',
    { type: 'file', device: cdrom ? 'cdrom' : 'disk', model: bus === 'virtio' ? 'virtio-non-transitional' : undefined },
    el('driver', { name: 'qemu', type: source.format, cache: disk.cache, discard: source.discard, error_policy: 'stop' }),
    el('source', { file: source.path }),
    source.backing !== undefined &&
      el('backingStore', { type: 'file' }, el('format', { type: source.backing.format }), el('source', { file: source.backing.path })),
    el('target', { dev, bus, tray: cdrom ? disk.cdrom?.tray : undefined }),
    disk.bootOrder !== undefined && el('boot', { order: disk.bootOrder }),
    readonly && el('readonly'),
    source.shareable === true && el('shareable'),
    disk.serial !== undefined && el('serial', {}, disk.serial),
    el('alias', { name: `ua-${disk.name ?? ''}` }),
  );
  return { bus, element };
}
