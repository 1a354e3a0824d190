// Choices of defaulting that KubeVirt takes from its cluster configuration.

import type { DiskBus } from './types/devices.js';

export interface DefaultsOptions {
  /**
   * Bus of a disk that names none. KubeVirt uses `sata` on amd64 for guests without virtio
   * drivers; podvirt defaults to `virtio` because its guest kernels carry only virtio_blk and
   * virtio is the faster path under emulation.
   */
  readonly diskBus?: DiskBus;
  /** KubeVirt's amd64 cluster default; the converter's device layout assumes PCIe (q35). */
  readonly machineType?: string;
  /** KubeVirt's default grace period for a VMI that sets none. */
  readonly terminationGracePeriodSeconds?: number;
  /**
   * Binding of the pod interface added to a VMI that names no network (KubeVirt's cluster
   * setting `network.defaultNetworkInterface`, `bridge` unless configured).
   */
  readonly networkInterface?: InterfaceBinding;
}

/** The bindings podvirt wires on the pod network. */
export type InterfaceBinding = 'bridge' | 'masquerade';

export const DEFAULT_DISK_BUS: DiskBus = 'virtio';
export const DEFAULT_MACHINE_TYPE = 'q35';
export const DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS = 30;
export const DEFAULT_NETWORK_INTERFACE: InterfaceBinding = 'bridge';

export function resolveDefaultsOptions(options: DefaultsOptions = {}): Required<DefaultsOptions> {
  return {
    diskBus: options.diskBus ?? DEFAULT_DISK_BUS,
    machineType: options.machineType ?? DEFAULT_MACHINE_TYPE,
    terminationGracePeriodSeconds: options.terminationGracePeriodSeconds ?? DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS,
    networkInterface: options.networkInterface ?? DEFAULT_NETWORK_INTERFACE,
  };
}
