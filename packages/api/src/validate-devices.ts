// spec.domain.devices: disks, watchdog, rng and the autoattach switches (interfaces live in
// validate-network.ts).

import { DNS_LABEL_RULE, fieldPath, indexPath, isDnsLabel, type RawObject, type Validation } from './validate-context.js';
import { validateInterfaces } from './validate-network.js';

export const DISK_BUSES = ['virtio', 'sata', 'scsi', 'usb'] as const;
// A virtio or usb cdrom is not something QEMU can present; KubeVirt refuses them as well.
export const CDROM_BUSES = ['sata', 'scsi'] as const;
const DISK_TARGETS = ['disk', 'cdrom', 'lun'];
const CACHE_MODES = ['none', 'writethrough', 'writeback'] as const;
const WATCHDOG_ACTIONS = ['poweroff', 'reset', 'shutdown'] as const;
const WATCHDOG_DEVICES = ['i6300esb', 'diag288'];
// KubeVirt's schema caps disks at 256.
const MAX_DISKS = 256;
// libvirt accepts only these characters in a disk serial.
const SERIAL_RE = /^[A-Za-z0-9_.+ -]+$/;
const AUTOATTACH = ['autoattachSerialConsole', 'autoattachMemBalloon', 'autoattachGraphicsDevice', 'autoattachPodInterface', 'logSerialConsole'];

function validateTarget(v: Validation, path: string, value: unknown, buses: readonly string[]): RawObject | undefined {
  const target = v.object(path, value);
  if (!target) return undefined;
  v.oneOf(fieldPath(path, 'bus'), target['bus'], buses);
  v.boolean(fieldPath(path, 'readonly'), target['readonly']);
  return target;
}

export function validateDiskItem(v: Validation, path: string, disk: RawObject): void {
  const name = v.string(fieldPath(path, 'name'), disk['name'], true);
  if (name !== undefined && !isDnsLabel(name)) {
    v.add(fieldPath(path, 'name'), 'Invalid', `${JSON.stringify(name)} must be ${DNS_LABEL_RULE}`);
  }
  const targets = v.presentKeys(disk, DISK_TARGETS);
  if (targets.length > 1) {
    v.add(path, 'Invalid', `set exactly one of disk, cdrom and lun; found ${targets.join(' and ')}`);
  }
  validateTarget(v, fieldPath(path, 'disk'), disk['disk'], DISK_BUSES);
  const cdrom = validateTarget(v, fieldPath(path, 'cdrom'), disk['cdrom'], CDROM_BUSES);
  if (cdrom) v.oneOf(fieldPath(path, 'cdrom.tray'), cdrom['tray'], ['open', 'closed']);
  v.integer(fieldPath(path, 'bootOrder'), disk['bootOrder'], 1);
  const serial = v.string(fieldPath(path, 'serial'), disk['serial']);
  if (serial !== undefined && serial !== '' && !SERIAL_RE.test(serial)) {
    v.add(fieldPath(path, 'serial'), 'Invalid', `${JSON.stringify(serial)} may contain only letters, digits, space and _ . + -`);
  }
  v.oneOf(fieldPath(path, 'cache'), disk['cache'], CACHE_MODES);
  v.oneOf(fieldPath(path, 'io'), disk['io'], ['native', 'threads']);
  v.boolean(fieldPath(path, 'shareable'), disk['shareable']);
  if (disk['shareable'] === true && disk['cache'] !== undefined && disk['cache'] !== 'none') {
    v.add(fieldPath(path, 'cache'), 'Invalid', `a shareable disk needs cache "none", not ${JSON.stringify(disk['cache'])}`);
  }
}

function validateDisks(v: Validation, path: string, value: unknown): void {
  const disks = v.array(path, value);
  if (!disks) return;
  if (disks.length > MAX_DISKS) v.add(path, 'TooMany', `${disks.length} disks; at most ${MAX_DISKS} are allowed`);
  const seen = new Map<string, number>();
  disks.forEach((item, i) => {
    const at = indexPath(path, i);
    const disk = v.object(at, item, true);
    if (!disk) return;
    validateDiskItem(v, at, disk);
    const name = disk['name'];
    if (typeof name !== 'string' || name === '') return;
    const first = seen.get(name);
    if (first === undefined) seen.set(name, i);
    else v.add(fieldPath(at, 'name'), 'Duplicate', `${JSON.stringify(name)} is already the name of ${indexPath(path, first)}`);
  });
}

function validateWatchdog(v: Validation, path: string, value: unknown): void {
  const watchdog = v.object(path, value);
  if (!watchdog) return;
  v.string(fieldPath(path, 'name'), watchdog['name'], true);
  const devices = v.presentKeys(watchdog, WATCHDOG_DEVICES);
  if (devices.length > 1) v.add(path, 'Invalid', `set exactly one watchdog device; found ${devices.join(' and ')}`);
  const i6300esb = v.object(fieldPath(path, 'i6300esb'), watchdog['i6300esb']);
  if (i6300esb) v.oneOf(fieldPath(path, 'i6300esb.action'), i6300esb['action'], WATCHDOG_ACTIONS);
}

export function validateDevices(v: Validation, path: string, devices: RawObject): void {
  validateDisks(v, fieldPath(path, 'disks'), devices['disks']);
  validateInterfaces(v, fieldPath(path, 'interfaces'), devices['interfaces']);
  v.object(fieldPath(path, 'rng'), devices['rng']);
  validateWatchdog(v, fieldPath(path, 'watchdog'), devices['watchdog']);
  for (const key of AUTOATTACH) v.boolean(fieldPath(path, key), devices[key]);
}
