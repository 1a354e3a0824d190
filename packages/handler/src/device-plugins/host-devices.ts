// The device nodes the handler offers to launcher pods as extended resources, KubeVirt's
// "permanent" host devices (virt-handler's device-manager): the hypervisor device and the two
// networking ones. Each becomes resource devices.kubevirt.io/<name>.

export interface HostDevice {
  /** The last part of the resource name, and the plugin's name in logs and socket names. */
  readonly name: string;
  /** The node's device path; host and container path of the DeviceSpec alike. */
  readonly path: string;
}

export const DEVICE_RESOURCE_PREFIX = 'devices.kubevirt.io';

export const HOST_DEVICES: readonly HostDevice[] = [
  { name: 'kvm', path: '/dev/kvm' },
  { name: 'tun', path: '/dev/net/tun' },
  { name: 'vhost-net', path: '/dev/vhost-net' },
];

/** KubeVirt advertises 1000 of each: a device node has no count, so this bounds VMs per node. */
export const DEFAULT_DEVICES_PER_PLUGIN = 1000;

/** Device cgroup permissions the container gets on each node: read and write, no mknod. */
export const DEVICE_PERMISSIONS = 'rw';

export function resourceName(device: HostDevice): string {
  return `${DEVICE_RESOURCE_PREFIX}/${device.name}`;
}

export function pluginSocketName(device: HostDevice): string {
  return `podvirt-${device.name}.sock`;
}

/** The IDs one plugin advertises: identical, interchangeable devices named <name>0 … <name>N-1. */
export function deviceIds(device: HostDevice, count: number): string[] {
  return Array.from({ length: count }, (_, i) => `${device.name}${i}`);
}
