// How an Event names a VMI (core/v1 ObjectReference). apiVersion and kind are written out,
// because the items of a list response may come without them.

import { VMI_API_VERSION, VMI_KIND } from './group-version.js';
import type { VirtualMachineInstance } from './types/vmi.js';

export interface VmiReference {
  readonly apiVersion: string;
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  readonly resourceVersion?: string;
}

export function vmiReference(vmi: VirtualMachineInstance): VmiReference {
  return {
    apiVersion: VMI_API_VERSION,
    kind: VMI_KIND,
    namespace: vmi.metadata.namespace ?? 'default',
    name: vmi.metadata.name ?? '',
    uid: vmi.metadata.uid ?? '',
    ...(vmi.metadata.resourceVersion === undefined ? {} : { resourceVersion: vmi.metadata.resourceVersion }),
  };
}
