// Hotplug: what a request to add or remove a volume of a running VMI says (KubeVirt's
// AddVolumeOptions and RemoveVolumeOptions), and the one edit of a VMI spec (or a VM's template
// spec) it makes. podvirtctl applies it through the API server today; a subresource can apply the
// same edit later, so the rules live here and not in a client.

import type { FieldError } from './field-error.js';
import { jsonEqual } from './json-value.js';
import type { Disk } from './types/devices.js';
import type { Volume } from './types/volumes.js';
import { isDnsLabel, DNS_LABEL_RULE, isRawObject, Validation } from './validate-context.js';
import { validateDiskItem } from './validate-devices.js';
import { resolveValidateOptions } from './validate-options.js';

export interface HotplugVolumeSource {
  persistentVolumeClaim?: { claimName: string; readOnly?: boolean; hotpluggable?: boolean };
}

export interface AddVolumeOptions {
  name: string;
  disk: Disk;
  volumeSource: HotplugVolumeSource;
  dryRun?: string[];
}

export interface RemoveVolumeOptions {
  name: string;
  dryRun?: string[];
}

/** The part of a VMI spec (or a VM template's) that hotplug edits. */
export interface HotplugSpec {
  domain: { devices?: { disks?: Disk[] } };
  volumes?: Volume[];
}

export function isHotplugVolume(volume: Volume): boolean {
  return volume.persistentVolumeClaim?.hotpluggable === true;
}

/** The names of a spec's hotplugged volumes. */
export function hotplugVolumeNames(spec: { volumes?: Volume[] | undefined }): Set<string> {
  return new Set((spec.volumes ?? []).filter(isHotplugVolume).map((v) => v.name));
}

/** Every problem of an add request, with the fields named as in the request's JSON. */
export function validateAddVolumeOptions(raw: unknown): FieldError[] {
  const v = new Validation(resolveValidateOptions(undefined));
  if (!isRawObject(raw)) {
    v.add('', 'TypeInvalid', 'an AddVolumeOptions must be a JSON object');
    return v.errors;
  }
  const name = v.string('name', raw['name'], true);
  if (name !== undefined && !isDnsLabel(name)) v.add('name', 'Invalid', `${JSON.stringify(name)} must be ${DNS_LABEL_RULE}`);
  const disk = v.object('disk', raw['disk'], true);
  if (disk) {
    // The disk takes the request's name: a bad one is reported once, under `name`.
    validateDiskItem(v, 'disk', { ...disk, name: name !== undefined && isDnsLabel(name) ? name : 'volume' });
    if (disk['cdrom'] !== undefined || disk['lun'] !== undefined) v.add('disk', 'NotSupported', 'a hotplugged volume is shown as a disk (disk.bus scsi); cdrom and lun are not supported');
    checkScsi(v, 'disk.disk.bus', isRawObject(disk['disk']) ? disk['disk']['bus'] : undefined);
  }
  const source = v.object('volumeSource', raw['volumeSource'], true);
  if (source) {
    if (source['dataVolume'] !== undefined) v.add('volumeSource.dataVolume', 'NotSupported', 'podvirt hotplugs a persistentVolumeClaim only (there are no DataVolumes)');
    const pvc = v.object('volumeSource.persistentVolumeClaim', source['persistentVolumeClaim'], source['dataVolume'] === undefined);
    if (pvc) {
      v.string('volumeSource.persistentVolumeClaim.claimName', pvc['claimName'], true);
      v.boolean('volumeSource.persistentVolumeClaim.readOnly', pvc['readOnly']);
    }
  }
  return v.errors;
}

/** A hotplugged disk's bus: scsi, or unset (defaulted to scsi). */
export function checkScsi(v: Validation, field: string, bus: unknown): void {
  if (bus === undefined || bus === null || bus === 'scsi') return;
  v.add(field, 'NotSupported', `${JSON.stringify(bus)}: a hotplugged disk uses bus "scsi"`);
}

/**
 * The spec with the volume and its disk added, or the field errors that refuse it: the name of
 * an existing volume or disk, a claim another volume of the spec already uses.
 */
export function withVolumeAdded<S extends HotplugSpec>(spec: S, options: AddVolumeOptions): { spec: S } | { errors: FieldError[] } {
  const errors: FieldError[] = [];
  const claimName = options.volumeSource.persistentVolumeClaim?.claimName ?? '';
  const volumes = spec.volumes ?? [];
  const disks = spec.domain.devices?.disks ?? [];
  if (volumes.some((v) => v.name === options.name) || disks.some((d) => d.name === options.name)) {
    errors.push({ field: 'name', type: 'Duplicate', message: `${JSON.stringify(options.name)} is already the name of a volume or disk of this VMI` });
  }
  const sameClaim = volumes.find((v) => v.persistentVolumeClaim?.claimName === claimName);
  if (sameClaim !== undefined) {
    errors.push({ field: 'volumeSource.persistentVolumeClaim.claimName', type: 'Duplicate', message: `claim ${JSON.stringify(claimName)} is already volume ${JSON.stringify(sameClaim.name)} of this VMI` });
  }
  if (errors.length > 0) return { errors };
  const copy = structuredClone(spec);
  const volume: Volume = {
    name: options.name,
    persistentVolumeClaim: { claimName, ...(options.volumeSource.persistentVolumeClaim?.readOnly === true ? { readOnly: true } : {}), hotpluggable: true },
  };
  const disk: Disk = { ...structuredClone(options.disk), name: options.name, disk: { ...options.disk.disk, bus: 'scsi' } };
  copy.volumes = [...volumes, volume];
  copy.domain.devices = { ...copy.domain.devices, disks: [...disks, disk] };
  return { spec: copy };
}

/** The spec without the hotplugged volume and its disk, or why it cannot be removed. */
export function withVolumeRemoved<S extends HotplugSpec>(spec: S, options: RemoveVolumeOptions): { spec: S } | { errors: FieldError[] } {
  const volume = (spec.volumes ?? []).find((v) => v.name === options.name);
  if (volume === undefined) return { errors: [{ field: 'name', type: 'NotFound', message: `this VMI has no volume ${JSON.stringify(options.name)}` }] };
  if (!isHotplugVolume(volume)) {
    return { errors: [{ field: 'name', type: 'Invalid', message: `volume ${JSON.stringify(options.name)} is not hotpluggable; only a hotplugged volume can be removed from a running VMI` }] };
  }
  const copy = structuredClone(spec);
  copy.volumes = (copy.volumes ?? []).filter((v) => v.name !== options.name);
  const disks = copy.domain.devices?.disks;
  if (disks !== undefined && copy.domain.devices) copy.domain.devices.disks = disks.filter((d) => d.name !== options.name);
  return { spec: copy };
}

/**
 * In a VMI spec: a hotpluggable volume's disk is a plain disk on bus scsi (QEMU hot-adds a
 * disk to a running guest on its virtio-scsi controller), and no boot device.
 */
export function validateHotplugDisks(v: Validation, spec: Record<string, unknown>): void {
  const volumes = Array.isArray(spec['volumes']) ? spec['volumes'] : [];
  const hotplugged = new Set(
    volumes.flatMap((volume: unknown) => {
      if (!isRawObject(volume) || typeof volume['name'] !== 'string') return [];
      const pvc = volume['persistentVolumeClaim'];
      return isRawObject(pvc) && pvc['hotpluggable'] === true ? [volume['name']] : [];
    }),
  );
  if (hotplugged.size === 0) return;
  const domain = spec['domain'];
  const devices = isRawObject(domain) ? domain['devices'] : undefined;
  const disks = isRawObject(devices) && Array.isArray(devices['disks']) ? devices['disks'] : [];
  disks.forEach((disk: unknown, i) => {
    if (!isRawObject(disk) || typeof disk['name'] !== 'string' || !hotplugged.has(disk['name'])) return;
    const at = `spec.domain.devices.disks[${i}]`;
    if (disk['cdrom'] !== undefined || disk['lun'] !== undefined) {
      v.add(at, 'NotSupported', `the disk of hotpluggable volume ${JSON.stringify(disk['name'])} must be a disk on bus scsi, not a cdrom or lun`);
    }
    checkScsi(v, `${at}.disk.bus`, isRawObject(disk['disk']) ? disk['disk']['bus'] : undefined);
    if (disk['bootOrder'] !== undefined) v.add(`${at}.bootOrder`, 'Forbidden', `a hotpluggable volume's disk cannot be a boot device`);
  });
}

function withoutHotplug(spec: unknown): unknown {
  if (!isRawObject(spec)) return spec;
  const volumes = Array.isArray(spec['volumes']) ? spec['volumes'] : [];
  const hotplugged = new Set(
    volumes.flatMap((v: unknown) => (isRawObject(v) && isRawObject(v['persistentVolumeClaim']) && v['persistentVolumeClaim']['hotpluggable'] === true ? [v['name']] : [])),
  );
  const domain = isRawObject(spec['domain']) ? spec['domain'] : {};
  const devices = isRawObject(domain['devices']) ? domain['devices'] : {};
  const disks = Array.isArray(devices['disks']) ? devices['disks'] : undefined;
  const keep = (item: unknown): boolean => !(isRawObject(item) && hotplugged.has(item['name']));
  return {
    ...spec,
    volumes: volumes.filter(keep),
    domain: { ...domain, devices: { ...devices, ...(disks === undefined ? {} : { disks: disks.filter(keep) }) } },
  };
}

/**
 * Whether a running VMI's spec change is only hotplug: hotpluggable volumes (with their disks)
 * added or removed, everything else as it was. The one spec change of a VMI KubeVirt admits
 * (its addvolume/removevolume subresources make it); the new spec is then checked whole.
 */
export function isHotplugEdit(oldSpec: unknown, newSpec: unknown): boolean {
  return jsonEqual(withoutHotplug(oldSpec), withoutHotplug(newSpec));
}
