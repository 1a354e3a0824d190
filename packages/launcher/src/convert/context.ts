import type { NicAttachment } from '@podvirt/api';
import type { DomainType } from './hypervisor.js';

/** A container image file the launcher found for a volume (or the kernel boot container). */
export interface ImageFile {
  readonly path: string;
  readonly format: 'raw' | 'qcow2';
}

/**
 * What the pure converter needs to know about the world, gathered beforehand by the
 * impure "inspect" step (paths from flags, image files found on disk, the hypervisor probe).
 */
export interface ConverterContext {
  readonly domainType: DomainType;
  /** `/var/run/kubevirt-private`: per-VMI serial socket and log live under `<dir>/<uid>/`. */
  readonly privateDir: string;
  /** `--ephemeral-disk-dir`: containerDisk overlays go to `<dir>/disk-data/<volume>/disk.qcow2`. */
  readonly ephemeralDiskDir: string;
  /** The libvirt runtime dir (`/var/run/libvirt`): empty disks and cloud-init ISOs, as KubeVirt places them. */
  readonly libvirtRunDir: string;
  /** containerDisk volume name → the image file found for it (see container-disk-layout.ts). */
  readonly containerDisks: ReadonlyMap<string, ImageFile>;
  /** Files of `firmware.kernelBoot.container`, when the VMI uses it. */
  readonly kernelBoot?: { readonly kernel?: string; readonly initrd?: string };
  /**
   * PVC and hostDisk volume name → its disk, found in the pod's mounts and opened confined to
   * them (prepare/persistent-disks.ts): the path libvirt opens, block or file, its I/O support.
   */
  readonly persistentDisks: ReadonlyMap<string, PersistentDisk>;
  readonly emulator: string;
  /** Interface name → the tap, MAC and MTU the pod network set-up gave it (network/pod-network-setup.ts). */
  readonly interfaces?: ReadonlyMap<string, NicAttachment>;
}

/** Found by opening the disk's file (or a probe in its directory) with O_DIRECT. */
export interface DiskIoSupport {
  readonly directIo: boolean;
  readonly preallocated: boolean;
}

/** A persistent disk, opened and checked (prepare/persistent-disks.ts). */
export interface PersistentDisk {
  /** What libvirt opens: the checked descriptor as `/proc/<launcher pid>/fd/<n>`. */
  readonly path: string;
  readonly block: boolean;
  readonly io: DiskIoSupport;
}
