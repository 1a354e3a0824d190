// Work-queue keys are `namespace/name`, as in client-go, so a VMI recreated under the same
// name lands on the same key and the reconcile loop sees old and new UID together.

import type { VirtualMachineInstance } from '@podvirt/api';

export function vmiKey(vmi: Pick<VirtualMachineInstance, 'metadata'>): string {
  return `${vmi.metadata.namespace ?? ''}/${vmi.metadata.name ?? ''}`;
}

export function splitVmiKey(key: string): { namespace: string; name: string } {
  const slash = key.indexOf('/');
  return { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}
