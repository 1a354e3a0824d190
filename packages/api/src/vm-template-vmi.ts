// The VMI a VirtualMachine's template describes, as the controller creates it: the VM's name and
// namespace, the template's labels and annotations plus `kubevirt.io/vm`, and the VM as owner and
// controller, so the VMI is garbage-collected with the VM (and kept with --cascade=orphan), and
// the VM controller's finalizer, so the VM sees how the VMI ended before the VMI goes.
// validateVm checks this same object through the one decode path, so what was validated is what
// gets created.

import { VMI_API_VERSION, VMI_KIND } from './group-version.js';
import { VM_CONTROLLER_FINALIZER, VM_LABEL } from './labels.js';
import { VM_API_VERSION, VM_KIND } from './vm-kind.js';
import type { VirtualMachine } from './types/vm.js';
import type { VirtualMachineInstance } from './types/vmi.js';

export function templateVmi(vm: VirtualMachine): VirtualMachineInstance {
  const name = vm.metadata.name ?? '';
  const template = vm.spec.template;
  return {
    apiVersion: VMI_API_VERSION,
    kind: VMI_KIND,
    metadata: {
      name,
      ...(vm.metadata.namespace === undefined ? {} : { namespace: vm.metadata.namespace }),
      labels: { ...template.metadata?.labels, [VM_LABEL]: name },
      ...(template.metadata?.annotations === undefined ? {} : { annotations: { ...template.metadata.annotations } }),
      ownerReferences: [{ apiVersion: VM_API_VERSION, kind: VM_KIND, name, uid: vm.metadata.uid ?? '', controller: true, blockOwnerDeletion: true }],
      finalizers: [VM_CONTROLLER_FINALIZER],
    },
    spec: structuredClone(template.spec),
  };
}
