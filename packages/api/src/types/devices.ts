// `spec.domain.devices` and `spec.networks`: disks, interfaces, rng, watchdog and the
// autoattach switches, with KubeVirt's JSON names.

export type DiskBus = 'virtio' | 'sata' | 'scsi' | 'usb';
export type DiskCache = 'none' | 'writethrough' | 'writeback';
export type DiskIo = 'native' | 'threads';

export interface DiskTarget {
  bus?: DiskBus;
  readonly?: boolean;
}

export interface CdromTarget {
  bus?: DiskBus;
  /** KubeVirt defaults a cdrom to read-only. */
  readonly?: boolean;
  tray?: 'open' | 'closed';
}

export interface Disk {
  /** Names the volume this disk shows to the guest. */
  name: string;
  disk?: DiskTarget;
  cdrom?: CdromTarget;
  bootOrder?: number;
  serial?: string;
  cache?: DiskCache;
  /** Unset: `native` where the disk is opened with O_DIRECT and fully allocated, as KubeVirt chooses. */
  io?: DiskIo;
  /** Several VMs may write the disk at once; needs cache `none`. */
  shareable?: boolean;
}

export interface Port {
  name?: string;
  protocol?: 'TCP' | 'UDP';
  port: number;
}

export interface Interface {
  /** Names the network (`spec.networks[].name`) this interface attaches to. */
  name: string;
  bridge?: Record<string, never>;
  masquerade?: Record<string, never>;
  model?: string;
  macAddress?: string;
  bootOrder?: number;
  /** `0000:81:01.0`: the guest PCI slot of the NIC. */
  pciAddress?: string;
  ports?: Port[];
}

export interface Network {
  name: string;
  pod?: { vmNetworkCIDR?: string };
}

export type WatchdogAction = 'poweroff' | 'reset' | 'shutdown';

export interface Watchdog {
  name: string;
  i6300esb?: { action?: WatchdogAction };
}

export interface Devices {
  disks?: Disk[];
  interfaces?: Interface[];
  /** Presence attaches a virtio RNG fed from the host's /dev/urandom. */
  rng?: Record<string, never>;
  watchdog?: Watchdog;
  /** False: no pod network interface is added when the VMI names none. */
  autoattachPodInterface?: boolean;
  autoattachSerialConsole?: boolean;
  autoattachMemBalloon?: boolean;
  autoattachGraphicsDevice?: boolean;
  /** The launcher pod's guest-console-log container; on unless false (and never without a serial console). */
  logSerialConsole?: boolean;
}
