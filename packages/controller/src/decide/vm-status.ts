// The status a VirtualMachine should have after a sync, as KubeVirt's VM controller writes it:
// created / ready, the strategy acted on, the first state change request dropped once it is done,
// the start-failure record, the conditions (Ready copied from the VMI, Failure, RestartRequired and
// the VMI's other conditions mirrored), the printable status and the generations. Pure.

import { applyDefaults, isFinalPhase, jsonEqual, removeCondition, upsertCondition, type RunStrategy, type StateChangeRequest, type VirtualMachine, type VirtualMachineInstance, type VmiCondition, type VmiSpec, type VmStatus } from '@podvirt/api';
import { nextStartFailure } from './vm-start-backoff.js';
import { printableStatus, type PendingWork } from './vm-printable-status.js';

/** Annotation on a VMI: the VM generation it was made from (KubeVirt's name). */
export const VM_GENERATION_ANNOTATION = 'kubevirt.io/vm-generation';

/** Conditions the VM owns itself; every other one is a mirror of the VMI's. */
const OWN_CONDITIONS: ReadonlySet<string> = new Set(['Ready', 'Failure', 'RestartRequired']);

export interface VmFailure {
  readonly reason: string;
  readonly message: string;
}

export interface VmStatusInput extends PendingWork {
  readonly strategy: RunStrategy;
  /** What went wrong in this sync (an invalid VM, a failed create or delete). */
  readonly failure?: VmFailure | undefined;
  /** A start request the sync queued (RerunOnFailure after a failure). */
  readonly addStartRequest?: boolean;
  readonly nowMs: number;
  readonly random: () => number;
  readonly now: string;
}

function trimmedRequests(requests: readonly StateChangeRequest[], vmi: VirtualMachineInstance | undefined): StateChangeRequest[] {
  const [first, ...rest] = requests;
  if (first === undefined) return [];
  const done =
    first.action === 'Stop'
      ? vmi === undefined || first.uid === undefined || first.uid !== vmi.metadata.uid
      : vmi !== undefined && vmi.metadata.deletionTimestamp === undefined && !isFinalPhase(vmi.status?.phase);
  return done ? rest : [...requests];
}

function readyCondition(vmi: VirtualMachineInstance | undefined): { status: 'True' | 'False' | 'Unknown'; reason: string; message: string; lastTransitionTime?: string } {
  if (vmi === undefined) return { status: 'False', reason: 'VMINotExists', message: 'VMI does not exist' };
  const ready = vmi.status?.conditions?.find((c) => c.type === 'Ready');
  if (ready === undefined) return { status: 'False', reason: 'VMIConditionMissing', message: 'VMI has no Ready condition' };
  return { status: ready.status, reason: ready.reason ?? '', message: ready.message ?? '', ...(ready.lastTransitionTime ? { lastTransitionTime: ready.lastTransitionTime } : {}) };
}

/**
 * A VMI spec with podvirt's defaults, as podvirt-api's mutating webhook stores it at create (the
 * defaults only fill what is missing, so a stored spec comes back unchanged). A spec that does
 * not decode is compared as it is.
 */
function defaultedSpec(vmi: VirtualMachineInstance, spec: VmiSpec): unknown {
  try {
    return applyDefaults({ ...vmi, spec }).spec;
  } catch {
    return spec;
  }
}

/**
 * The template changed since the running VMI was made: the change waits for the next start. Both
 * sides are compared defaulted: where podvirt-api's webhook runs, the stored VMI carries the
 * defaults its template lacks.
 */
function restartRequired(vm: VirtualMachine, vmi: VirtualMachineInstance | undefined): boolean {
  if (vmi === undefined || vmi.metadata.deletionTimestamp !== undefined || isFinalPhase(vmi.status?.phase)) return false;
  return !jsonEqual(defaultedSpec(vmi, vmi.spec), defaultedSpec(vmi, vm.spec.template.spec));
}

function failureOf(vmi: VirtualMachineInstance | undefined, failure: VmFailure | undefined): VmFailure | undefined {
  if (failure !== undefined) return failure;
  if (vmi?.status?.phase !== 'Failed') return undefined;
  const why = vmi.status.reason ?? 'Failed';
  return { reason: why, message: `VMI ${vmi.metadata.name ?? ''} failed (${why})` };
}

function conditionsOf(vm: VirtualMachine, vmi: VirtualMachineInstance | undefined, failure: VmFailure | undefined, now: string): VmiCondition[] {
  let conditions = upsertCondition(vm.status?.conditions, { type: 'Ready', ...readyCondition(vmi) }, now);
  conditions = failure === undefined ? removeCondition(conditions, 'Failure') : upsertCondition(conditions, { type: 'Failure', status: 'True', ...failure }, now);
  conditions = restartRequired(vm, vmi)
    ? upsertCondition(conditions, { type: 'RestartRequired', status: 'True', reason: 'TemplateChanged', message: 'the template changed while the VMI runs; it applies at the next start' }, now)
    : removeCondition(conditions, 'RestartRequired');
  const mirrored = (vmi?.status?.conditions ?? []).filter((c) => !OWN_CONDITIONS.has(c.type));
  conditions = conditions.filter((c) => OWN_CONDITIONS.has(c.type) || mirrored.some((m) => m.type === c.type));
  for (const c of mirrored) {
    conditions = upsertCondition(conditions, { type: c.type, status: c.status, reason: c.reason, message: c.message, lastTransitionTime: c.lastTransitionTime ?? undefined }, now);
  }
  return conditions;
}

export function nextVmStatus(vm: VirtualMachine, vmi: VirtualMachineInstance | undefined, input: VmStatusInput): VmStatus {
  const previous = vm.status ?? {};
  const created = vmi !== undefined;
  const requests = [...(previous.stateChangeRequests ?? []), ...(input.addStartRequest === true ? [{ action: 'Start' as const }] : [])];
  const trimmed = trimmedRequests(requests, vmi);
  const startFailure = nextStartFailure(previous.startFailure, vmi, input.strategy, input.nowMs, input.random);
  const generation = vmi?.metadata.annotations?.[VM_GENERATION_ANNOTATION];
  const { startFailure: _previousFailure, ...rest } = previous;
  const withFailure: VirtualMachine = { ...vm, status: startFailure === undefined ? rest : { ...rest, startFailure } };
  const next: VmStatus = {
    ...previous,
    created,
    ready: vmi?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true,
    conditions: conditionsOf(vm, vmi, failureOf(vmi, input.failure), input.now),
    printableStatus: printableStatus(withFailure, vmi, input.strategy, input),
    ...(vm.metadata.generation === undefined ? {} : { desiredGeneration: vm.metadata.generation }),
    ...(generation !== undefined && /^\d+$/.test(generation) ? { observedGeneration: Number(generation) } : {}),
  };
  // Set once a VMI was made: until then the VM has never acted on a strategy (KubeVirt's rule,
  // which lets RerunOnFailure start a VM the first time without a start request).
  if (previous.runStrategy !== undefined || created) next.runStrategy = input.strategy;
  if (trimmed.length > 0) next.stateChangeRequests = trimmed;
  else delete next.stateChangeRequests;
  if (startFailure === undefined) delete next.startFailure;
  else next.startFailure = startFailure;
  return next;
}
