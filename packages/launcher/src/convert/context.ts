import type { NicAttachment } from '../network/network-plan.js';
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
  /** hostDisk paths must live under one of these prefixes. */
  readonly hostDiskPrefixes: readonly string[];
  /** hostDisk volume name → the path libvirt opens (the confined open file, see prepare/host-disks.ts). */
  readonly hostDisks: ReadonlyMap<string, string>;
  /**
   * `<private dir>/vmi-disks`: the pod mounts each filesystem PVC's volume and each hostDisk's
   * directory at `<dir>/<volume>/`, as KubeVirt does. Block PVCs are devices at `/dev/<volume>`.
   */
  readonly vmiDisksDir: string;
  /** Where block PVC devices appear (`/dev`). */
  readonly devDir: string;
  /** PVC volume name → what the pod gives it: a block device, or a mounted directory. */
  readonly volumeModes: ReadonlyMap<string, 'block' | 'filesystem'>;
  /** Disk volume name → whether its file or device takes O_DIRECT and is fully allocated (PVC and hostDisk only). */
  readonly diskIo: ReadonlyMap<string, DiskIoSupport>;
  readonly emulator: string;
  /** Interface name → the tap, MAC and MTU the pod network set-up gave it (network/pod-network-setup.ts). */
  readonly interfaces?: ReadonlyMap<string, NicAttachment>;
}

/** Found by opening the disk's file (or a probe in its directory) with O_DIRECT. */
export interface DiskIoSupport {
  readonly directIo: boolean;
  readonly preallocated: boolean;
}
