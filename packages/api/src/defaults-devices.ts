// Defaults of spec.domain.devices and spec.volumes. Each mutates the fresh copy made by
// applyDefaults.

import { pullPolicyFor } from './defaults-compute.js';
import type { Devices, DiskBus } from './types/devices.js';
import type { Volume } from './types/volumes.js';

// QEMU offers no virtio cdrom; SATA is what KubeVirt gives a cdrom without a bus.
const CDROM_BUS: DiskBus = 'sata';

/**
 * A volume no disk shows gets a disk of its own name, as KubeVirt's defaulting gives it (the
 * bus comes from defaultDisks). Works on a raw spec too: the launcher applies it to what it got.
 */
export function defaultVolumeDisks(spec: { domain?: { devices?: { disks?: unknown[] } }; volumes?: unknown[] }): void {
  const volumes = Array.isArray(spec.volumes) ? spec.volumes : [];
  const devices = spec.domain?.devices;
  if (devices === undefined || volumes.length === 0) return;
  const disks = Array.isArray(devices.disks) ? devices.disks : [];
  const shown = new Set(disks.map((disk) => (isNamed(disk) ? disk.name : undefined)));
  const added = volumes.filter((volume) => isNamed(volume) && !shown.has(volume.name)).map((volume) => ({ name: (volume as { name: string }).name }));
  if (added.length > 0) devices.disks = [...disks, ...added];
}

function isNamed(value: unknown): value is { name: string } {
  return typeof value === 'object' && value !== null && typeof (value as { name?: unknown }).name === 'string';
}

/** `hotplugged`: the disks of hotpluggable volumes, which QEMU can only hot-add on scsi. */
export function defaultDisks(devices: Devices, diskBus: DiskBus, hotplugged: ReadonlySet<string> = new Set()): void {
  for (const disk of devices.disks ?? []) {
    const withLun = disk as { lun?: unknown };
    // A disk that says nothing about its kind is a plain disk.
    if (!disk.disk && !disk.cdrom && !withLun.lun) disk.disk = {};
    if (disk.disk) disk.disk.bus ??= hotplugged.has(disk.name) ? 'scsi' : diskBus;
    if (disk.cdrom) {
      disk.cdrom.bus ??= CDROM_BUS;
      // Media in a drive is read-only unless asked otherwise, and the tray starts closed.
      disk.cdrom.readonly ??= true;
      disk.cdrom.tray ??= 'closed';
    }
  }
}

export function defaultWatchdog(devices: Devices): void {
  const watchdog = devices.watchdog;
  if (!watchdog) return;
  // i6300esb is the watchdog model amd64 guests have drivers for; `reset` mimics real hardware.
  watchdog.i6300esb ??= {};
  watchdog.i6300esb.action ??= 'reset';
}

export function defaultAutoattach(devices: Devices): void {
  // KubeVirt attaches these unless told not to; written out so the converter reads no implicit state.
  devices.autoattachSerialConsole ??= true;
  devices.autoattachMemBalloon ??= true;
  devices.autoattachGraphicsDevice ??= true;
}

export function defaultVolumes(volumes: Volume[] | undefined): void {
  for (const volume of volumes ?? []) {
    // Decides whether the image is fetched again on each start, as Kubernetes does for images.
    const disk = volume.containerDisk;
    if (disk) disk.imagePullPolicy ??= pullPolicyFor(disk.image);
  }
}
