// The VM controller's executor for one key: settle which VM and which VMI (ours, by controller
// owner UID), check the VM through the one decode path, decide (decideVm), act (create or delete
// the VMI, or turn a Halted VM with a start request to Always), then write the status nextVmStatus
// computes when it changed. Creations are remembered until the VMI informer shows them
// (PodExpectations, the same guard the pod creations use), so a lagging cache never makes a
// second VMI; the VMI's name is the VM's, so the API server refuses a second one anyway, across
// controller restarts and leader changes.

import { isDeepStrictEqual } from 'node:util';
import { formatFieldErrors, kubeTime, runStrategyOf, templateVmi, validateVm, type RunStrategy, type VirtualMachine, type VirtualMachineInstance } from '@podvirt/api';
import { objectKey, splitObjectKey } from '@podvirt/kube-runtime';
import type { Logger } from 'pino';
import type { VmClient, VmEventRecorder, VmiStore, VmStore } from '../kube/cluster-roles.js';
import { decideVm, type VmDecision } from '../decide/decide-vm.js';
import { nextVmStatus, VM_GENERATION_ANNOTATION, type VmFailure } from '../decide/vm-status.js';
import type { PodExpectations } from './pod-expectations.js';
import type { KeyedSyncResult } from './keyed-workers.js';

export interface VmSyncDeps {
  readonly vms: VmStore;
  readonly vmis: VmiStore;
  readonly vmClient: VmClient;
  readonly events: VmEventRecorder;
  /** VMI creations not yet seen by the informer, by VM key. */
  readonly expectations: PodExpectations;
  /** The status last written per VM, until the informer catches up (see freshVm). */
  readonly written: Map<string, WrittenStatus>;
  readonly now: () => Date;
  readonly random: () => number;
  readonly log: Logger;
}

export interface WrittenStatus {
  /** The resourceVersion the write replaced: a cache still at it is stale. */
  readonly staleVersion: string | undefined;
  readonly vm: VirtualMachine;
}

export const vmKey = (vm: Pick<VirtualMachine, 'metadata'>): string => objectKey(vm);

/**
 * The VM as this controller last wrote it, while the informer still serves the version before
 * that write: a start-failure record just written must hold back the next start even when the
 * VMI's deletion is seen before the VM's status update.
 */
function freshVm(deps: VmSyncDeps, key: string, cached: VirtualMachine): VirtualMachine {
  const written = deps.written.get(key);
  if (written === undefined) return cached;
  if (cached.metadata.resourceVersion === written.staleVersion && cached.metadata.uid === written.vm.metadata.uid) return written.vm;
  deps.written.delete(key);
  return cached;
}

function controlledBy(vmi: VirtualMachineInstance, vm: VirtualMachine): boolean {
  return vmi.metadata.ownerReferences?.some((ref) => ref.controller === true && ref.uid === vm.metadata.uid) === true;
}

export async function syncVm(deps: VmSyncDeps, key: string, signal?: AbortSignal): Promise<KeyedSyncResult> {
  const { namespace, name } = splitObjectKey(key);
  const cached = deps.vms.getVm(namespace, name);
  if (cached === undefined) {
    deps.expectations.forget(key);
    deps.written.delete(key);
    return {};
  }
  const vm = freshVm(deps, key, cached);
  const nowDate = deps.now();
  const nowMs = nowDate.getTime();
  const found = deps.vmis.get(namespace, name);
  const vmi = found !== undefined && controlledBy(found, vm) ? found : undefined;
  if (vmi !== undefined) deps.expectations.creationObserved(key);
  const startPending = vmi === undefined && deps.expectations.pendingFor(key) > 0;

  let failure: VmFailure | undefined;
  let decision: VmDecision = { action: { kind: 'none' } };
  let strategy: RunStrategy = 'Halted';
  const fieldErrors = validateVm(vm);
  if (fieldErrors.length > 0) {
    // As KubeVirt's admission would refuse it: nothing is created or stopped for it.
    failure = { reason: 'FailedCreate', message: `invalid VirtualMachine: ${formatFieldErrors(fieldErrors)}` };
    await deps.events.recordVm(vm, 'Warning', 'FailedCreate', failure.message);
  } else if (found !== undefined && vmi === undefined) {
    failure = { reason: 'FailedCreate', message: `VMI ${namespace}/${name} exists and is not controlled by this VM` };
    strategy = runStrategyOf(vm);
  } else {
    strategy = runStrategyOf(vm);
    decision = decideVm(vm, vmi, strategy, nowMs, startPending);
  }

  const acted = await act(deps, vm, decision, signal);
  // The spec just changed: the VM's update event brings the next sync, which writes the status.
  if (decision.action.kind === 'start-halted') return {};
  const status = nextVmStatus(vm, vmi, {
    strategy,
    failure: acted.failure ?? failure,
    addStartRequest: decision.addStartRequest === true && acted.failure === undefined,
    startPending: startPending || acted.created,
    stopPending: acted.deleted,
    nowMs,
    random: deps.random,
    now: kubeTime(nowDate),
  });
  if (!isDeepStrictEqual(status, vm.status ?? {})) {
    const written = await deps.vmClient.replaceVmStatus({ ...vm, status }, signal);
    deps.written.set(key, { staleVersion: cached.metadata.resourceVersion, vm: written });
  }
  if (acted.error !== undefined) throw acted.error;
  return decision.requeueAfterMs === undefined ? {} : { requeueAfterMs: decision.requeueAfterMs };
}

interface Acted {
  readonly created: boolean;
  readonly deleted: boolean;
  readonly failure?: VmFailure;
  /** Thrown after the status is written, so the queue retries with backoff. */
  readonly error?: unknown;
}

async function act(deps: VmSyncDeps, vm: VirtualMachine, decision: VmDecision, signal: AbortSignal | undefined): Promise<Acted> {
  const key = vmKey(vm);
  const { namespace = '', name = '' } = vm.metadata;
  const action = decision.action;
  switch (action.kind) {
    case 'none':
      return { created: false, deleted: false };
    case 'start-halted':
      await deps.vmClient.setVmRunning(vm, signal);
      return { created: false, deleted: false };
    case 'create': {
      const vmi = templateVmi(vm);
      vmi.metadata.annotations = { ...vmi.metadata.annotations, [VM_GENERATION_ANNOTATION]: String(vm.metadata.generation ?? 1) };
      deps.expectations.expectCreation(key);
      try {
        await deps.vmClient.createVmi(vmi, signal);
      } catch (err) {
        deps.expectations.creationObserved(key);
        const message = `creating VMI ${name}: ${err instanceof Error ? err.message : String(err)}`;
        await deps.events.recordVm(vm, 'Warning', 'FailedCreate', message);
        return { created: false, deleted: false, failure: { reason: 'FailedCreate', message }, error: err };
      }
      deps.log.info({ vmi: name }, 'started VM: created its VMI');
      await deps.events.recordVm(vm, 'Normal', 'SuccessfulCreate', `Started the virtual machine by creating the new virtual machine instance ${name}`);
      return { created: true, deleted: false };
    }
    case 'delete':
      try {
        await deps.vmClient.deleteVmi(namespace, name, action.uid, signal);
      } catch (err) {
        const message = `deleting VMI ${name}: ${err instanceof Error ? err.message : String(err)}`;
        await deps.events.recordVm(vm, 'Warning', 'FailedDelete', message);
        return { created: false, deleted: false, failure: { reason: 'FailedDelete', message }, error: err };
      }
      deps.log.info({ vmi: name, why: action.why }, 'stopping VM: deleted its VMI');
      await deps.events.recordVm(vm, 'Normal', 'SuccessfulDelete', `Stopped the virtual machine by deleting the virtual machine instance ${action.uid} (${action.why})`);
      return { created: false, deleted: true };
  }
}
