// Device plugin resources of one container: which extended resources it asks for, the devices
// the plugins allocate for them, and those as nodes for the container's private /dev. A
// container asking for none keeps the process runtime's usual view of the host's /dev.

import type { V1Container } from '@kubernetes/client-node';
import type { DeviceNode } from '../container/private-dev.js';
import { deviceNumbers, type DevicePluginRegistry } from './device-plugin-registry.js';

const NATIVE = /^(cpu|memory|ephemeral-storage|pods|storage|hugepages-.+)$|^([^/]*\.)?kubernetes\.io\//;

/** Extended resources of a container: a limit (or, without one, a request) per resource name. */
export function extendedResources(container: V1Container): Map<string, number> {
  const out = new Map<string, number>();
  const { requests = {}, limits = {} } = container.resources ?? {};
  for (const [name, value] of Object.entries({ ...requests, ...limits })) {
    if (NATIVE.test(name) || !name.includes('/')) continue;
    const count = Number(value);
    if (Number.isInteger(count) && count > 0) out.set(name, count);
  }
  return out;
}

/** Undefined when the container requests no extended resource (it then sees the host's /dev). */
export async function containerDevices(
  registry: DevicePluginRegistry,
  hostRoot: string,
  podUid: string,
  container: V1Container,
): Promise<DeviceNode[] | undefined> {
  const wanted = extendedResources(container);
  if (wanted.size === 0) return undefined;
  const specs = await registry.allocate(`${podUid}/${container.name}`, wanted);
  return Promise.all(specs.map(async (spec) => ({ path: spec.containerPath, ...(await deviceNumbers(hostRoot, spec)) })));
}
