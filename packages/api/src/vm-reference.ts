// How an Event names a VirtualMachine (core/v1 ObjectReference).

import { VM_API_VERSION, VM_KIND } from './vm-kind.js';
import type { VirtualMachine } from './types/vm.js';
import { objectReference, type VmiReference } from './vmi-reference.js';

export function vmReference(vm: VirtualMachine): VmiReference {
  return objectReference(VM_API_VERSION, VM_KIND, vm.metadata);
}
