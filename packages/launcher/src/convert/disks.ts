import { hotplugVolumeNames, VmiInvalidError, type DefaultedDisk, type DefaultedVmi } from '@podvirt/api';
import type { ConverterContext, PersistentDisk } from './context.js';
import { driverModes } from './disk-driver.js';
import type { PrepareStep } from './prepare-step.js';
import type { VolumeSource } from './volume-source.js';
import { convertVolume } from './volumes.js';
import { el, renderXml, type XmlElement } from './xml.js';
import { persistentVolumeClaim } from './persistent-volume-claim.js';

export interface ConvertedDisks {
  readonly disks: XmlElement[];
  readonly controllers: XmlElement[];
  readonly prepare: PrepareStep[];
}

/** Disk letters in order per prefix: vda, vdb … (virtio) and sda, sdb … (sata, scsi, usb). */
export function devName(prefix: string, n: number): string {
  let s = '';
  for (let i = n; i >= 0; i = Math.floor(i / 26) - 1) s = String.fromCharCode(97 + (i % 26)) + s;
  return prefix + s;
}

/**
 * Every disk joined with its volume (decodeVmi matched them); the volume decides the file, the
 * disk how the guest sees it. A hotpluggable volume's disk is not part of the domain the VM
 * boots with: it reaches the launcher pod through an attachment pod and is attached to the
 * running domain on the virtio-scsi controller every domain gets.
 */
export function convertDisks(vmi: DefaultedVmi, ctx: ConverterContext): ConvertedDisks {
  const hotplugged = hotplugVolumeNames(vmi.spec);
  const disks = (vmi.spec.domain.devices.disks ?? []).filter((d) => !hotplugged.has(d.name));
  const volumes = vmi.spec.volumes ?? [];
  const counters = { vd: 0, sd: 0 };
  const out: XmlElement[] = [];
  const prepare: PrepareStep[] = [];
  const buses = new Set<string>();
  for (const disk of disks) {
    const index = volumes.findIndex((v) => v.name === disk.name);
    const volume = volumes[index];
    if (volume === undefined) continue;
    const source = convertVolume(vmi, volume, index, ctx);
    const { bus, element } = diskElement(disk, `spec.domain.devices.disks[${disks.indexOf(disk)}]`, source, counters, ctx);
    buses.add(bus);
    out.push(element);
    if (source.prepare !== undefined) prepare.push(source.prepare);
  }
  const controllers = [
    el('controller', { type: 'usb', model: buses.has('usb') ? 'qemu-xhci' : 'none' }),
    // Always, as KubeVirt does where hotplug is possible: a disk hotplugged later needs it, and a
    // controller cannot be hot-added on its own reliably.
    el('controller', { type: 'scsi', index: 0, model: 'virtio-non-transitional' }),
  ];
  return { disks: out, controllers, prepare };
}

/**
 * The `<disk>` of a hotplugged claim, attached to the running domain as `dev` on its scsi
 * controller: the same element a claim the VM boots with gets (driver modes, serial, alias).
 */
export function hotplugDiskXml(vmi: DefaultedVmi, volume: string, opened: PersistentDisk, dev: string): string {
  const disks = vmi.spec.domain.devices.disks ?? [];
  const at = disks.findIndex((d) => d.name === volume);
  const disk = disks[at];
  const index = (vmi.spec.volumes ?? []).findIndex((v) => v.name === volume);
  const pvc = vmi.spec.volumes?.[index]?.persistentVolumeClaim;
  if (disk === undefined || pvc === undefined) throw VmiInvalidError.at('spec.volumes', 'NotFound', `no hotplugged claim and disk named ${JSON.stringify(volume)}`);
  const ctx = { persistentDisks: new Map([[volume, opened]]) };
  const source = persistentVolumeClaim(volume, pvc, `spec.volumes[${index}].persistentVolumeClaim`, ctx);
  const counters = { vd: 0, sd: 0 };
  const { element } = diskElement(disk, `spec.domain.devices.disks[${at}]`, source, counters, ctx, dev);
  return renderXml(element);
}

function diskElement(
  disk: DefaultedDisk,
  field: string,
  source: VolumeSource,
  counters: { vd: number; sd: number },
  ctx: Pick<ConverterContext, 'persistentDisks'>,
  fixedDev?: string,
): { bus: string; element: XmlElement } {
  const cdrom = disk.cdrom;
  const bus = cdrom?.bus ?? disk.disk?.bus ?? 'virtio';
  const prefix = bus === 'virtio' ? 'vd' : 'sd';
  const dev = fixedDev ?? devName(prefix, counters[prefix]++);
  const readonly = cdrom ? cdrom.readonly : disk.disk?.readonly === true || source.readonly === true;
  const modes = driverModes(disk, field, source, ctx.persistentDisks.get(disk.name)?.io);
  const element = el(
    'disk',
    { type: source.block === true ? 'block' : 'file', device: cdrom ? 'cdrom' : 'disk', model: bus === 'virtio' ? 'virtio-non-transitional' : undefined },
    el('driver', { name: 'qemu', type: source.format, cache: modes.cache, io: modes.io, discard: source.discard, error_policy: 'stop' }),
    el('source', source.block === true ? { dev: source.path } : { file: source.path }),
    source.backing !== undefined &&
      el('backingStore', { type: 'file' }, el('format', { type: source.backing.format }), el('source', { file: source.backing.path })),
    el('target', { dev, bus, tray: cdrom?.tray }),
    disk.bootOrder !== undefined && el('boot', { order: disk.bootOrder }),
    readonly && el('readonly'),
    (source.shareable === true || disk.shareable === true) && el('shareable'),
    disk.serial !== undefined && el('serial', {}, disk.serial),
    el('alias', { name: `ua-${disk.name}` }),
  );
  return { bus, element };
}
