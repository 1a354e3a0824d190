// The init containers that bring a VMI's guest images into its launcher pod. KubeVirt runs
// each containerDisk / kernel boot image as a container of the pod and bind-mounts its files
// into the launcher from the node; podvirt has no node-side mounter, so each image's own
// entrypoint copies its files into the shared `container-disks` emptyDir before the compute
// container starts. Pure.

import type { V1Container, V1ResourceRequirements } from '@kubernetes/client-node';
import type { VirtualMachineInstance } from '@podvirt/api';
import {
  CONTAINER_DISK_CONTAINER_PREFIX,
  CONTAINER_DISK_DIR,
  CONTAINER_DISKS_VOLUME,
  KERNEL_BOOT_CONTAINER_NAME,
  KERNEL_BOOT_SLOT,
} from '../launcher-layout.js';

// A copy needs little memory, but CPU to copy a disk image at the disk's pace: under a CPU limit
// of 10m (a CFS quota of 1 ms per 100 ms) copying the test guest took seconds. So each copy gets
// the compute container's CPU: its request, and its limit when it has one. A Guaranteed compute
// container (limits equal requests) thus keeps a Guaranteed pod (every container, init ones
// included, must qualify), and since init requests count only as max(init, sum of containers),
// the pod asks the scheduler for nothing more. Memory stays at 40Mi, limit equal to request.
const COPY_MEMORY = '40Mi';
const COPY_MIN_CPU = '10m';

function copyResources(compute: V1ResourceRequirements): V1ResourceRequirements {
  const cpuRequest = compute.requests?.['cpu'] ?? COPY_MIN_CPU;
  const cpuLimit = compute.limits?.['cpu'];
  return {
    requests: { cpu: String(cpuRequest), memory: COPY_MEMORY },
    limits: { ...(cpuLimit === undefined ? {} : { cpu: String(cpuLimit) }), memory: COPY_MEMORY },
  };
}

function imageContainer(name: string, image: string, slot: string, pullPolicy: string | undefined, compute: V1ResourceRequirements): V1Container {
  return {
    name,
    image,
    ...(pullPolicy === undefined ? {} : { imagePullPolicy: pullPolicy }),
    args: [`${CONTAINER_DISK_DIR}/${slot}`],
    resources: copyResources(compute),
    volumeMounts: [{ name: CONTAINER_DISKS_VOLUME, mountPath: CONTAINER_DISK_DIR }],
  };
}

/**
 * Kernel boot container first (the guest cannot start without it), then volumes in spec order.
 * `compute` is the compute container's resources, whose CPU each copy gets.
 */
export function renderImageInitContainers(vmi: VirtualMachineInstance, compute: V1ResourceRequirements): V1Container[] {
  const containers: V1Container[] = [];
  const kernel = vmi.spec.domain.firmware?.kernelBoot?.container;
  if (kernel !== undefined) {
    containers.push(imageContainer(KERNEL_BOOT_CONTAINER_NAME, kernel.image, KERNEL_BOOT_SLOT, kernel.imagePullPolicy, compute));
  }
  for (const volume of vmi.spec.volumes ?? []) {
    const disk = volume.containerDisk;
    if (disk === undefined) continue;
    containers.push(imageContainer(`${CONTAINER_DISK_CONTAINER_PREFIX}${volume.name}`, disk.image, volume.name, disk.imagePullPolicy, compute));
  }
  return containers;
}
