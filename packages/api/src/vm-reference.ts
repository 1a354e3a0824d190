// How an Event names a VirtualMachine (core/v1 ObjectReference).

import { VM_API_VERSION, VM_KIND } from './vm-kind.js';
import type { VirtualMachine } from './types/vm.js';
import { objectReference, type ObjectReference } from './vmi-reference.js';

export function vmReference(vm: VirtualMachine): ObjectReference {
  return objectReference(VM_API_VERSION, VM_KIND, vm.metadata);
}
