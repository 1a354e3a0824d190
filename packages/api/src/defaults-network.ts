// The pod network interface virt-api adds to a VMI that names no network and no interface
// (KubeVirt: pkg/network/vmispec/defaults.go, SetDefaultNetworkInterface).

import type { InterfaceBinding } from './defaults-options.js';
import type { Devices } from './types/devices.js';
import type { VmiSpec } from './types/vmi.js';

/** The name KubeVirt gives the implicit interface and its pod network. */
export const DEFAULT_POD_NETWORK_NAME = 'default';

/**
 * A VMI that names neither `networks` nor `interfaces` gets one interface `default` on the pod
 * network `default`, with the cluster's default binding, unless `autoattachPodInterface` is
 * false. Naming either list opts out entirely, as in KubeVirt: nothing is merged into it.
 */
export function defaultPodInterface(spec: VmiSpec, devices: Devices, binding: InterfaceBinding): void {
  if (devices.autoattachPodInterface === false) return;
  if ((spec.networks?.length ?? 0) > 0 || (devices.interfaces?.length ?? 0) > 0) return;
  devices.interfaces = [{ name: DEFAULT_POD_NETWORK_NAME, [binding]: {} }];
  spec.networks = [{ name: DEFAULT_POD_NETWORK_NAME, pod: {} }];
}
