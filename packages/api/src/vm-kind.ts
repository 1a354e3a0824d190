// Identity of the VirtualMachine resource as KubeVirt serves it: a VM keeps a VMI template and
// its run strategy, and outlives the VMIs the controller makes from it.

import { VMI_API_VERSION, VMI_GROUP, VMI_VERSION } from './group-version.js';

export const VM_API_VERSION = VMI_API_VERSION;
export const VM_KIND = 'VirtualMachine';
export const VM_LIST_KIND = 'VirtualMachineList';
export const VM_PLURAL = 'virtualmachines';
export const VM_SINGULAR = 'virtualmachine';
export const VM_SHORT_NAMES: readonly string[] = ['vm', 'vms'];

/** Where VMs live in the REST API, as `@podvirt/kube-runtime`'s ResourceClient takes it. */
export const VM_RESOURCE = { group: VMI_GROUP, version: VMI_VERSION, plural: VM_PLURAL, namespaced: true } as const;
