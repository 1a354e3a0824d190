// How an Event names an object (core/v1 ObjectReference): a VMI here, a migration and a VM in
// their own files, any object in kube-runtime's Event recorder. apiVersion and kind are written
// out, because the items of a list response may come without them.

import { VMI_API_VERSION, VMI_KIND } from './group-version.js';
import type { ObjectMeta } from './types/object-meta.js';
import type { VirtualMachineInstance } from './types/vmi.js';

export interface ObjectReference {
  readonly apiVersion: string;
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  readonly resourceVersion?: string;
}

export function vmiReference(vmi: VirtualMachineInstance): ObjectReference {
  return objectReference(VMI_API_VERSION, VMI_KIND, vmi.metadata);
}

/** The same reference for any podvirt kind (the migration's too). */
export function objectReference(apiVersion: string, kind: string, metadata: ObjectMeta): ObjectReference {
  return {
    apiVersion,
    kind,
    namespace: metadata.namespace ?? 'default',
    name: metadata.name ?? '',
    uid: metadata.uid ?? '',
    ...(metadata.resourceVersion === undefined ? {} : { resourceVersion: metadata.resourceVersion }),
  };
}
