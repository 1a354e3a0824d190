// The init containers that bring a VMI's guest images into its launcher pod. KubeVirt runs
// each containerDisk / kernel boot image as a container of the pod and bind-mounts its files
// into the launcher from the node; podvirt has no node-side mounter, so each image's own
// entrypoint copies its files into the shared `container-disks` emptyDir before the compute
// container starts. Pure.

import type { V1Container } from '@kubernetes/client-node';
import type { VirtualMachineInstance } from '@podvirt/api';
import {
  CONTAINER_DISK_CONTAINER_PREFIX,
  CONTAINER_DISK_DIR,
  CONTAINER_DISKS_VOLUME,
  KERNEL_BOOT_CONTAINER_NAME,
  KERNEL_BOOT_SLOT,
} from '../launcher-layout.js';

// A copy needs little. Limits equal requests so that a VMI whose compute container is
// Guaranteed keeps a Guaranteed pod (every container, init ones included, must qualify);
// init requests only count as max(init, sum of containers), so they add nothing to the pod.
const COPY_RESOURCES = { requests: { cpu: '10m', memory: '40Mi' }, limits: { cpu: '10m', memory: '40Mi' } };

function imageContainer(name: string, image: string, slot: string, pullPolicy: string | undefined): V1Container {
  return {
    name,
    image,
    ...(pullPolicy === undefined ? {} : { imagePullPolicy: pullPolicy }),
    args: [`${CONTAINER_DISK_DIR}/${slot}`],
    resources: structuredClone(COPY_RESOURCES),
    volumeMounts: [{ name: CONTAINER_DISKS_VOLUME, mountPath: CONTAINER_DISK_DIR }],
  };
}

/** Kernel boot container first (the guest cannot start without it), then volumes in spec order. */
export function renderImageInitContainers(vmi: VirtualMachineInstance): V1Container[] {
  const containers: V1Container[] = [];
  const kernel = vmi.spec.domain.firmware?.kernelBoot?.container;
  if (kernel !== undefined) {
    containers.push(imageContainer(KERNEL_BOOT_CONTAINER_NAME, kernel.image, KERNEL_BOOT_SLOT, kernel.imagePullPolicy));
  }
  for (const volume of vmi.spec.volumes ?? []) {
    const disk = volume.containerDisk;
    if (disk === undefined) continue;
    containers.push(imageContainer(`${CONTAINER_DISK_CONTAINER_PREFIX}${volume.name}`, disk.image, volume.name, disk.imagePullPolicy));
  }
  return containers;
}
