// VmClient over kube-runtime's ResourceClient: each failure becomes a ControllerError
// (apiFailure) naming what was attempted.

import { VM_RESOURCE, VMI_RESOURCE, type VirtualMachine, type VirtualMachineInstance } from '@podvirt/api';
import { ResourceClient, type KubeClient } from '@podvirt/kube-runtime';
import { apiFailure } from './api-failure.js';
import { metadataOf } from './kube-clients.js';
import type { VmClient } from './cluster-roles.js';

async function mapped<R>(what: string, call: () => Promise<R>): Promise<R> {
  try {
    return await call();
  } catch (err) {
    throw apiFailure(err, what);
  }
}

export function kubeVmClient(client: KubeClient): VmClient {
  const vms = new ResourceClient<VirtualMachine>(client, VM_RESOURCE);
  const vmis = new ResourceClient<VirtualMachineInstance>(client, VMI_RESOURCE);
  return {
    readVm: (namespace, name, signal) => mapped(`get VM ${namespace}/${name}`, () => vms.get(namespace, name, signal)),
    setVmFinalizers: (vm, finalizers, signal) => {
      const { namespace = '', name = '', resourceVersion } = vm.metadata;
      return mapped(`patch VM ${namespace}/${name}`, () => vms.mergePatch(namespace, name, { metadata: metadataOf({ finalizers, ...(resourceVersion === undefined ? {} : { resourceVersion }) }) }, signal));
    },
    patchVmiMetadata: (namespace, name, patch, signal) => mapped(`patch VMI ${namespace}/${name}`, () => vmis.mergePatch(namespace, name, { metadata: metadataOf(patch) }, signal)),
    replaceVmStatus: (vm, signal) => mapped(`update status of VM ${vm.metadata.namespace ?? ''}/${vm.metadata.name ?? ''}`, () => vms.replaceStatus(vm, signal)),
    setVmRunning: (vm, signal) => {
      const { namespace = '', name = '', resourceVersion } = vm.metadata;
      const spec = vm.spec.runStrategy !== undefined ? { runStrategy: 'Always' } : { running: true };
      return mapped(`patch VM ${namespace}/${name}`, () => vms.mergePatch(namespace, name, { metadata: { resourceVersion }, spec }, signal));
    },
    createVmi: (vmi, signal) => mapped(`create VMI ${vmi.metadata.namespace ?? ''}/${vmi.metadata.name ?? ''}`, () => vmis.create(vmi.metadata.namespace ?? '', vmi, signal)),
    deleteVmi: async (namespace, name, uid, signal) => {
      await mapped(`delete VMI ${namespace}/${name}`, () => vmis.delete(namespace, name, { uid }, signal));
    },
  };
}
