// Which of the device plugins' nodes this container was given (devices.kubevirt.io/kvm, tun,
// vhost-net). Logged for the operator only: KVM vs TCG is decided by probing (kvm-probe.ts),
// never by a node's presence.

import { stat } from 'node:fs/promises';

export const PLUGIN_DEVICE_NODES: readonly string[] = ['/dev/kvm', '/dev/net/tun', '/dev/vhost-net'];

export async function presentDeviceNodes(
  exists: (path: string) => Promise<boolean> = (path) => stat(path).then((s) => s.isCharacterDevice(), () => false),
): Promise<string[]> {
  const found = await Promise.all(PLUGIN_DEVICE_NODES.map(exists));
  return PLUGIN_DEVICE_NODES.filter((_, i) => found[i] === true);
}
