// volumeDevices: a block claim appears in the container as a device node at its devicePath, as
// the kubelet gives it. The node goes into the container's private /dev (container/private-dev.ts,
// the one the device plugins' allocations use too), made from the claim's device numbers, so
// nothing is created in the host's /dev.

import type { V1Container } from '@kubernetes/client-node';
import type { DeviceNode } from '../container/private-dev.js';
import { deviceNumbers } from './device-plugin-registry.js';
import { VolumeSetupError } from './pod-volumes.js';

/** A node per volumeDevice of the container, from the block device its volume set-up found. */
export async function volumeDeviceNodes(container: V1Container, sources: ReadonlyMap<string, string> | undefined): Promise<DeviceNode[]> {
  const nodes: DeviceNode[] = [];
  for (const d of container.volumeDevices ?? []) {
    const source = sources?.get(d.name);
    const numbers = source === undefined ? undefined : await deviceNumbers('/', { hostPath: source, containerPath: d.devicePath, permissions: 'rw' }).catch(() => undefined);
    if (numbers?.type !== 'b') throw new VolumeSetupError(`volume "${d.name}": no block device to attach at ${d.devicePath}`);
    nodes.push({ path: d.devicePath, ...numbers });
  }
  return nodes;
}
