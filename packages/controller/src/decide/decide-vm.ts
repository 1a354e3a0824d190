// What a VirtualMachine's run strategy asks for, given its VMI (or none): the pure half of the VM
// controller, as KubeVirt's syncRunStrategy decides it. The first state change request (a start,
// or a stop naming the VMI's UID) is acted on; status.ts trims it once it is done.
//
//   strategy        VMI running                 VMI final                      no VMI
//   Always          stop on a stop request      delete (restart follows)       create (after back-off)
//   RerunOnFailure  stop on a stop request      delete; Failed → a start req.  create on a start request,
//                                                                              or when just switched to it
//   Manual          stop on a stop request      keep (until a stop request)    create on a start request
//   Halted          delete                      delete                         a start request → runStrategy Always
//   Once            —                           —                              create
//
// Deleting is graceful: the VMI gets its termination grace period, as `kubectl delete vmi` would.
// A VM being deleted stops its VMI first (its finalizer holds it meanwhile), unless it is deleted
// with its dependents orphaned (`kubectl delete --cascade=orphan`): then the VMI is left running.

import { ORPHAN_FINALIZER, type RunStrategy, type StateChangeRequest, type VirtualMachine, type VirtualMachineInstance } from '@podvirt/api';
import { startBackoffLeftMs } from './vm-start-backoff.js';

export type VmAction =
  | { readonly kind: 'none' }
  | { readonly kind: 'create' }
  | { readonly kind: 'delete'; readonly uid: string; readonly why: string }
  /** Halted with a start request: KubeVirt turns the strategy to Always (or running to true). */
  | { readonly kind: 'start-halted' };

export interface VmDecision {
  readonly action: VmAction;
  /** After a delete of a Failed VMI under RerunOnFailure: queue a start request. */
  readonly addStartRequest?: boolean;
  /** Look again then: the back-off ends. */
  readonly requeueAfterMs?: number;
}

const NONE: VmDecision = { action: { kind: 'none' } };

export function firstRequest(vm: VirtualMachine): StateChangeRequest | undefined {
  return vm.status?.stateChangeRequests?.[0];
}

export function hasStartRequest(vm: VirtualMachine): boolean {
  return firstRequest(vm)?.action === 'Start';
}

export function hasStopRequestFor(vm: VirtualMachine, vmi: VirtualMachineInstance): boolean {
  const request = firstRequest(vm);
  return request?.action === 'Stop' && request.uid !== undefined && request.uid === vmi.metadata.uid;
}

/** Deleted with `propagationPolicy: Orphan`: its VMI outlives it. */
export function orphaning(vm: VirtualMachine): boolean {
  return vm.metadata.deletionTimestamp !== undefined && (vm.metadata.finalizers?.includes(ORPHAN_FINALIZER) ?? false);
}

function remove(vmi: VirtualMachineInstance, why: string): VmDecision {
  // One being deleted already only needs waiting for.
  if (vmi.metadata.deletionTimestamp !== undefined) return NONE;
  return { action: { kind: 'delete', uid: vmi.metadata.uid ?? '', why } };
}

function createAfterBackoff(vm: VirtualMachine, nowMs: number): VmDecision {
  const left = startBackoffLeftMs(vm.status?.startFailure, nowMs);
  return left > 0 ? { action: { kind: 'none' }, requeueAfterMs: left } : { action: { kind: 'create' } };
}

/**
 * The action for `vm` with its VMI (undefined when none exists); `startPending` is true while a
 * created VMI has not reached the cache yet (nothing is created twice).
 */
export function decideVm(vm: VirtualMachine, vmi: VirtualMachineInstance | undefined, strategy: RunStrategy, nowMs: number, startPending = false): VmDecision {
  if (vm.metadata.deletionTimestamp !== undefined) {
    return vmi === undefined || orphaning(vm) ? NONE : remove(vmi, 'the VirtualMachine is being deleted');
  }
  if (vmi === undefined && startPending) return NONE;
  const final = vmi?.status?.phase === 'Failed' || vmi?.status?.phase === 'Succeeded';
  switch (strategy) {
    case 'Always':
      if (vmi !== undefined) {
        if (hasStopRequestFor(vm, vmi)) return remove(vmi, 'restart requested');
        return final ? remove(vmi, `VMI ${vmi.status?.phase ?? ''}, runStrategy Always restarts it`) : NONE;
      }
      return createAfterBackoff(vm, nowMs);
    case 'RerunOnFailure':
      if (vmi !== undefined) {
        if (vmi.metadata.deletionTimestamp !== undefined) {
          // The start request queued with the delete may have been lost (a status write that
          // met a conflict): queue it again, unless the user asked this VMI to stop.
          const lost = vmi.status?.phase === 'Failed' && !hasStopRequestFor(vm, vmi) && !(vm.status?.stateChangeRequests ?? []).some((r) => r.action === 'Start');
          return lost ? { action: { kind: 'none' }, addStartRequest: true } : NONE;
        }
        if (hasStopRequestFor(vm, vmi)) return remove(vmi, 'stop requested');
        if (vmi.status?.phase === 'Failed') return { ...remove(vmi, 'VMI Failed, runStrategy RerunOnFailure restarts it'), addStartRequest: true };
        if (vmi.status?.phase === 'Succeeded') return remove(vmi, 'guest shut down, runStrategy RerunOnFailure leaves it stopped');
        return NONE;
      }
      if (!hasStartRequest(vm) && vm.status?.runStrategy === strategy) return NONE;
      return createAfterBackoff(vm, nowMs);
    case 'Manual':
      if (vmi !== undefined) return hasStopRequestFor(vm, vmi) ? remove(vmi, 'stop requested') : NONE;
      return hasStartRequest(vm) ? { action: { kind: 'create' } } : NONE;
    case 'Halted':
      if (vmi !== undefined) return remove(vmi, 'runStrategy Halted');
      return hasStartRequest(vm) ? { action: { kind: 'start-halted' } } : NONE;
    case 'Once':
      return vmi === undefined ? { action: { kind: 'create' } } : NONE;
  }
}
