// The launcher pod's fixed shape: the monitor's path, the directories every launcher expects
// and the emptyDir volumes behind them. Spelled as KubeVirt's launcher pod spells them (with
// podvirt's binary name), so the same in-pod layout works. The launcher image's Dockerfile and
// the manifests are checked against these constants; change them here and only here.

/** PID 1 of the compute container. */
export const LAUNCHER_MONITOR_COMMAND = '/usr/bin/podvirt-launcher-monitor';
export const COMPUTE_CONTAINER_NAME = 'compute';
/** The guest's serial log as container output (KubeVirt's name), and the launcher image's tail. */
export const CONSOLE_LOG_CONTAINER_NAME = 'guest-console-log';
export const TAIL_COMMAND = '/usr/bin/podvirt-tail';
export const LAUNCHER_IMAGE_REPOSITORY = 'podvirt/launcher';

export const KUBEVIRT_SHARE_DIR = '/var/run/kubevirt';
export const KUBEVIRT_PRIVATE_DIR = '/var/run/kubevirt-private';
export const EPHEMERAL_DISK_DIR = '/var/run/kubevirt-ephemeral-disks';
export const CONTAINER_DISK_DIR = '/var/run/kubevirt/container-disks';
export const HOTPLUG_DISK_DIR = '/var/run/kubevirt/hotplug-disks';
export const SOCKETS_DIR = '/var/run/kubevirt/sockets';
export const LIBVIRT_RUNTIME_DIR = '/var/run/libvirt';

export interface LauncherVolume {
  readonly name: string;
  readonly mountPath: string;
}

/** One emptyDir each, mounted into the compute container. Order is the rendered order. */
export const LAUNCHER_VOLUMES: readonly LauncherVolume[] = [
  { name: 'private', mountPath: KUBEVIRT_PRIVATE_DIR },
  { name: 'public', mountPath: KUBEVIRT_SHARE_DIR },
  { name: 'sockets', mountPath: SOCKETS_DIR },
  { name: 'libvirt-runtime', mountPath: LIBVIRT_RUNTIME_DIR },
  { name: 'ephemeral-disks', mountPath: EPHEMERAL_DISK_DIR },
  { name: 'container-disks', mountPath: CONTAINER_DISK_DIR },
  { name: 'hotplug-disks', mountPath: HOTPLUG_DISK_DIR },
];

// KubeVirt's virt-controller defaults: qemu must appear within 240 s, plus up to 120 s of
// random jitter so that a mass start does not time out in lockstep.
export const QEMU_TIMEOUT_BASE_SECONDS = 240;
export const QEMU_TIMEOUT_JITTER_SECONDS = 120;
/** The launcher gets the VMI's grace plus this to shut the guest down and report it. */
export const LAUNCHER_GRACE_EXTRA_SECONDS = 15;
/** The pod gets the VMI's grace plus this, so kubelet's SIGKILL comes after the launcher's. */
export const POD_GRACE_EXTRA_SECONDS = 30;
/** Hook sidecars are not supported; the launcher is told to wait for none. */
export const HOOK_SIDECARS = 0;

/** The VMI annotation that keeps a failed launcher's container alive for debugging. */
export const KEEP_LAUNCHER_ALIVE_ANNOTATION = 'kubevirt.io/keep-launcher-alive-after-failure';

/** Flags every launcher pod carries, in rendered order, with `<…>` for per-VMI values. */
export const LAUNCHER_FLAGS: readonly string[] = [
  '--qemu-timeout',
  '--name',
  '--uid',
  '--namespace',
  '--kubevirt-share-dir',
  '--ephemeral-disk-dir',
  '--container-disk-dir',
  '--grace-period-seconds',
  '--hook-sidecars',
];

/**
 * Guest images (containerDisk volumes, the kernel boot container) reach the launcher through
 * the `container-disks` emptyDir: an init container per image, running that image, gets its
 * slot there as its only argument and puts the image's files into it. The slots are where
 * the launcher looks (its README, "Where container images are found"): `<dir>/<volume>/` for
 * a containerDisk, `<dir>/kernel-boot/` for the kernel boot container.
 */
export const CONTAINER_DISKS_VOLUME = 'container-disks';
export const KERNEL_BOOT_CONTAINER_NAME = 'kernel-boot';
export const KERNEL_BOOT_SLOT = 'kernel-boot';
/** KubeVirt names a containerDisk's container `volume<name>`. */
export const CONTAINER_DISK_CONTAINER_PREFIX = 'volume';
