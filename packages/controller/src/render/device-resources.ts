// The device plugin resources the compute container asks for, as KubeVirt's virt-controller
// decides them (pkg/virt-controller/services/renderresources.go, getRequiredResources): kvm only
// when emulation is not allowed, tun when the VM has a NIC (each one is a tap in the pod), and
// vhost-net when a NIC is virtio and emulation is not allowed (with emulation allowed KubeVirt
// leaves /dev/vhost-net out uniformly and qemu emulates the NIC in userspace). Device plugin
// resources take no overcommit, so the same count goes in requests and limits. The VMI is the
// decoded one, so the default pod interface virt-api adds to a VMI that names no network counts
// as KubeVirt's check (an interface, or autoattachPodInterface not false) counts it.

import type { DefaultedVmi } from '@podvirt/api';

export const DEVICE_RESOURCE_PREFIX = 'devices.kubevirt.io';
export const KVM_RESOURCE = `${DEVICE_RESOURCE_PREFIX}/kvm`;
export const TUN_RESOURCE = `${DEVICE_RESOURCE_PREFIX}/tun`;
export const VHOST_NET_RESOURCE = `${DEVICE_RESOURCE_PREFIX}/vhost-net`;

export function deviceResources(vmi: DefaultedVmi, allowEmulation: boolean): Record<string, string> {
  const interfaces = vmi.spec.domain.devices.interfaces ?? [];
  const resources: Record<string, string> = {};
  if (!allowEmulation) resources[KVM_RESOURCE] = '1';
  if (interfaces.length > 0) resources[TUN_RESOURCE] = '1';
  // An interface without a model is virtio (the converter's default, as KubeVirt's).
  if (!allowEmulation && interfaces.some((i) => i.model === undefined || i.model === 'virtio')) resources[VHOST_NET_RESOURCE] = '1';
  return resources;
}
