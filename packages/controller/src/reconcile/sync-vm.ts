// The VM controller's executor for one key: settle which VM and which VMI (ours, by controller
// owner UID; an ownerless VMI of the VM's name is adopted, as KubeVirt does), check the VM through
// the one decode path, decide (decideVm), act (create or delete the VMI, or turn a Halted VM with
// a start request to Always), then write the status nextVmStatus computes when it changed.
// Creations are remembered until the VMI informer shows them (PodExpectations, the same guard the
// pod creations use), so a lagging cache never makes a second VMI; the VMI's name is the VM's, so
// the API server refuses a second one anyway, across controller restarts and leader changes.
//
// Finalizers, as KubeVirt's: the VM carries VM_CONTROLLER_FINALIZER while it lives, so a deleted
// VM first stops its VMI and goes once the VMI is gone (at once when deleted with orphaning); each
// VMI made from a VM carries it too, taken off once the VMI has ended and the VM's status has
// recorded how (or once no VM controls the VMI any more).

import { formatFieldErrors, isFinalPhase, jsonEqual, kubeTime, runStrategyOf, templateVmi, validateVm, VM_API_VERSION, VM_CONTROLLER_FINALIZER, VM_KIND, type RunStrategy, type VirtualMachine, type VirtualMachineInstance } from '@podvirt/api';
import { objectKey, splitObjectKey } from '@podvirt/kube-runtime';
import type { Logger } from 'pino';
import type { VmClient, VmEventRecorder, VmiStore, VmStore } from '../kube/cluster-roles.js';
import { decideVm, firstRequest, orphaning, type VmDecision } from '../decide/decide-vm.js';
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
  /** The resourceVersions this controller's writes replaced: a cache still at one is stale. */
  readonly staleVersions: readonly string[];
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
  if (cached.metadata.resourceVersion !== undefined && written.staleVersions.includes(cached.metadata.resourceVersion) && cached.metadata.uid === written.vm.metadata.uid) return written.vm;
  deps.written.delete(key);
  return cached;
}

/** Remembers a write: `before` is the VM it replaced (the cache may still serve it, or an older one this controller replaced). */
function remember(deps: VmSyncDeps, key: string, before: VirtualMachine, after: VirtualMachine): void {
  const earlier = deps.written.get(key)?.staleVersions ?? [];
  const version = before.metadata.resourceVersion;
  deps.written.set(key, { staleVersions: (version === undefined ? earlier : [...earlier, version]).slice(-8), vm: after });
}

function controlledBy(vmi: VirtualMachineInstance, vm: VirtualMachine): boolean {
  return vmi.metadata.ownerReferences?.some((ref) => ref.controller === true && ref.uid === vm.metadata.uid) === true;
}

/** A start request asking for a paused start (`virtctl start --paused`), which podvirt cannot do. */
function pausedStart(vm: VirtualMachine): boolean {
  const request = firstRequest(vm);
  return vm.metadata.deletionTimestamp === undefined && request?.action === 'Start' && request.data?.['startPaused'] === 'true';
}

function hasController(vmi: VirtualMachineInstance): boolean {
  return vmi.metadata.ownerReferences?.some((ref) => ref.controller === true) === true;
}

function hasFinalizer(object: { metadata: { finalizers?: string[] | undefined } }): boolean {
  return object.metadata.finalizers?.includes(VM_CONTROLLER_FINALIZER) ?? false;
}

/**
 * KubeVirt's claim by name: a VMI of the VM's name that no controller owns, not being deleted,
 * becomes the VM's, once a fresh read shows the VM is still this one and not being deleted. The
 * adopted VMI, or undefined when it could not be (someone else changed it first: the next sync
 * sees what happened).
 */
async function adopt(deps: VmSyncDeps, vm: VirtualMachine, vmi: VirtualMachineInstance, signal: AbortSignal | undefined): Promise<VirtualMachineInstance | undefined> {
  const { namespace = '', name = '' } = vm.metadata;
  const fresh = await deps.vmClient.readVm(namespace, name, signal);
  if (fresh === undefined || fresh.metadata.uid !== vm.metadata.uid || fresh.metadata.deletionTimestamp !== undefined) return undefined;
  const ownerReferences = [
    ...(vmi.metadata.ownerReferences ?? []),
    { apiVersion: VM_API_VERSION, kind: VM_KIND, name, uid: vm.metadata.uid ?? '', controller: true, blockOwnerDeletion: true },
  ];
  const adopted = await deps.vmClient.patchVmiMetadata(namespace, name, { ownerReferences, ...(vmi.metadata.resourceVersion === undefined ? {} : { resourceVersion: vmi.metadata.resourceVersion }) }, signal);
  deps.log.info({ vmi: name, uid: vmi.metadata.uid }, 'adopted an ownerless VMI of the VM\'s name');
  await deps.events.recordVm(vm, 'Normal', 'SuccessfulAdopt', `Adopted the virtual machine instance ${name} (${vmi.metadata.uid ?? ''}), which no controller owned`);
  return adopted;
}

/** The VM controller's finalizer comes off a VMI once it ended (or, with no VM controlling it, once it is going). */
async function releaseVmi(deps: VmSyncDeps, vmi: VirtualMachineInstance, controlled: boolean, signal: AbortSignal | undefined): Promise<void> {
  if (!hasFinalizer(vmi)) return;
  const ended = isFinalPhase(vmi.status?.phase);
  // A VMI deleted before it reached a node never ends (the VMI controller lets it go as it is).
  const goneUnstarted = vmi.metadata.deletionTimestamp !== undefined && ['', 'Pending', 'Scheduling'].includes(vmi.status?.phase ?? '');
  if (!ended && !goneUnstarted && (controlled || vmi.metadata.deletionTimestamp === undefined)) return;
  const { namespace = '', name = '', resourceVersion } = vmi.metadata;
  const finalizers = (vmi.metadata.finalizers ?? []).filter((f) => f !== VM_CONTROLLER_FINALIZER);
  await deps.vmClient.patchVmiMetadata(namespace, name, { finalizers, ...(resourceVersion === undefined ? {} : { resourceVersion }) }, signal);
}

export async function syncVm(deps: VmSyncDeps, key: string, signal?: AbortSignal): Promise<KeyedSyncResult> {
  const { namespace, name } = splitObjectKey(key);
  const cached = deps.vms.getVm(namespace, name);
  const found = deps.vmis.get(namespace, name);
  if (cached === undefined) {
    deps.expectations.forget(key);
    deps.written.delete(key);
    if (found !== undefined) await releaseVmi(deps, found, false, signal);
    return {};
  }
  let vm = freshVm(deps, key, cached);
  const nowDate = deps.now();
  const nowMs = nowDate.getTime();
  let vmi = found !== undefined && controlledBy(found, vm) ? found : undefined;
  if (found !== undefined && vmi === undefined && !hasController(found) && found.metadata.deletionTimestamp === undefined && vm.metadata.deletionTimestamp === undefined) {
    vmi = await adopt(deps, vm, found, signal);
  }
  if (vmi !== undefined) deps.expectations.creationObserved(key);
  const startPending = vmi === undefined && deps.expectations.pendingFor(key) > 0;

  if (vm.metadata.deletionTimestamp === undefined && !hasFinalizer(vm)) {
    // On before any VMI is made: a VM deleted from now on stops its VMI before it goes.
    const patched = await deps.vmClient.setVmFinalizers(vm, [...(vm.metadata.finalizers ?? []), VM_CONTROLLER_FINALIZER], signal);
    remember(deps, key, vm, patched);
    vm = patched;
  }

  let failure: VmFailure | undefined;
  let decision: VmDecision = { action: { kind: 'none' } };
  let strategy: RunStrategy = 'Halted';
  const fieldErrors = validateVm(vm);
  if (fieldErrors.length > 0) {
    // As KubeVirt's admission would refuse it: nothing is created or stopped for it (but a
    // deleted VM still stops its VMI).
    failure = { reason: 'FailedCreate', message: `invalid VirtualMachine: ${formatFieldErrors(fieldErrors)}` };
    if (vm.metadata.deletionTimestamp === undefined) await deps.events.recordVm(vm, 'Warning', 'FailedCreate', failure.message);
    else decision = decideVm(vm, vmi, strategy, nowMs, startPending);
  } else if (pausedStart(vm)) {
    // KubeVirt would start the VMI paused; podvirt cannot (no startStrategy), and starting it
    // running would not be what was asked: nothing is done until the request is replaced.
    failure = {
      reason: 'FailedCreate',
      message: 'status.stateChangeRequests[0].data.startPaused: Unsupported value: "true": podvirt cannot start a VM paused; remove the request, start the VM, then pause its VMI (podvirtctl pause vmi NAME)',
    };
    strategy = runStrategyOf(vm);
    await deps.events.recordVm(vm, 'Warning', 'FailedCreate', failure.message);
  } else if (found !== undefined && vmi === undefined && vm.metadata.deletionTimestamp === undefined) {
    const owner = hasController(found) ? 'is controlled by another object' : 'has no controller and could not be adopted yet';
    failure = { reason: 'FailedCreate', message: `VMI ${namespace}/${name} exists and ${owner}` };
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
  if (!jsonEqual(status, vm.status ?? {})) {
    const written = await deps.vmClient.replaceVmStatus({ ...vm, status }, signal);
    remember(deps, key, vm, written);
    vm = written;
  }
  if (acted.error !== undefined) throw acted.error;
  // The status has recorded how the VMI ended: the VMI may go. (One deleted just now is released
  // on the sync its deletion brings, from the version the deletion made.)
  if (vmi !== undefined && !acted.deleted) await releaseVmi(deps, vmi, true, signal);
  // Not this VM's (ownerless, or an earlier VM's of the same name, which is gone): no VM waits on it.
  else if (found !== undefined && vmi === undefined) await releaseVmi(deps, found, false, signal);
  if (vm.metadata.deletionTimestamp !== undefined && hasFinalizer(vm) && (vmi === undefined || orphaning(vm))) {
    // Its VMI is gone (or is to be left running): the VM may go.
    const finalizers = (vm.metadata.finalizers ?? []).filter((f) => f !== VM_CONTROLLER_FINALIZER);
    await deps.vmClient.setVmFinalizers(vm, finalizers, signal);
    deps.written.delete(key);
  }
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
