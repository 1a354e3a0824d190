// Start, stop and restart of a VirtualMachine: what KubeVirt's `virtualmachines/{start,stop,
// restart}` subresources write, so the controller sees the same thing whichever client asked
// (podvirt-api's subresources, `podvirtctl start|stop|restart vm`, or a plain `kubectl patch`).
// One implementation for both: the decision is pure (planVmStateChange), the writes go through
// the small VmStateApi each caller gives over its own client.
//
//   strategy        start                            stop                              restart
//   (VMI live)      refused: already running         (below)                           (below)
//   Always, Once    refused (it runs by itself)      spec: runStrategy Halted          Stop(uid) + Start requests (Once: refused)
//   RerunOnFailure  Start request (refused after     Stop(uid) request                 Stop(uid) + Start requests
//   / Manual        a failure under RerunOnFailure)
//   Halted          spec: runStrategy Always         only a shorter grace period       refused
//
// (`running: true|false` instead of runStrategy is written back as `running`.) A stop with a
// grace period shortens the VMI's termination grace period first; a restart with grace period 0
// sets it to 1 s first (a prompt shutdown, as KubeVirt's forced restart). A stop or restart of a
// VM without a live VMI is refused; a finished VMI is stopped before a start makes a new one.

import { isFinalPhase } from './phases.js';
import type { StateChangeRequest, VirtualMachine, VmSpec } from './types/vm.js';
import type { VirtualMachineInstance } from './types/vmi.js';
import { runStrategyOf } from './validate-vm.js';

export type VmStateCommand = 'start' | 'stop' | 'restart';

export interface VmStateOptions {
  /** stop: the VMI's grace period to set first; restart: only 0 (the VMI's is set to 1 s). */
  readonly gracePeriodSeconds?: number | undefined;
  /** Decide (and refuse) as for real, write nothing. */
  readonly dryRun?: boolean | undefined;
}

export type VmStateErrorCode =
  | 'API_ERR_VM_NOT_FOUND'
  | 'API_ERR_VM_NOT_RUNNING'
  | 'API_ERR_VM_RUNNING'
  | 'API_ERR_VM_STRATEGY'
  | 'API_ERR_VM_CONFLICT'
  | 'API_ERR_VM_GRACE_PERIOD';

/** A refusal of the change itself; every code but NOT_FOUND and GRACE_PERIOD is a conflict with the VM's state. */
export class VmStateError extends Error {
  override readonly name = 'VmStateError';
  constructor(
    readonly code: VmStateErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** The reads and writes a state change needs, over the caller's Kubernetes client. */
export interface VmStateApi {
  readVm(namespace: string, name: string, signal: AbortSignal): Promise<VirtualMachine | undefined>;
  readVmi(namespace: string, name: string, signal: AbortSignal): Promise<VirtualMachineInstance | undefined>;
  /** PUT of the status subresource, guarded by the VM's resourceVersion: 'stale' when it changed (409). */
  replaceVmStatus(vm: VirtualMachine, signal: AbortSignal): Promise<'written' | 'stale'>;
  /** A merge patch of spec.runStrategy / spec.running, guarded by `resourceVersion`: 'stale' when it changed. */
  patchVmSpec(namespace: string, name: string, spec: Partial<Pick<VmSpec, 'running' | 'runStrategy'>>, resourceVersion: string | undefined, signal: AbortSignal): Promise<'written' | 'stale'>;
  setVmiGracePeriod(namespace: string, name: string, seconds: number, signal: AbortSignal): Promise<void>;
}

export type VmStateWrite =
  | { readonly kind: 'requests'; readonly requests: readonly StateChangeRequest[]; readonly replace: boolean }
  | { readonly kind: 'spec'; readonly running: boolean };

export interface VmStatePlan {
  readonly write: VmStateWrite;
  /** Set on the VMI before the write. */
  readonly vmiGracePeriodSeconds: number | undefined;
}

/** Attempts before a VM that keeps changing under us is reported. */
const ATTEMPTS = 3;

function live(vmi: VirtualMachineInstance | undefined): boolean {
  return vmi !== undefined && !isFinalPhase(vmi.status?.phase);
}

/** The write a command makes on this VM and VMI, or the VmStateError saying why none. */
export function planVmStateChange(command: VmStateCommand, vm: VirtualMachine, vmi: VirtualMachineInstance | undefined, options: VmStateOptions = {}): VmStatePlan {
  const ref = `${vm.metadata.namespace ?? ''}/${vm.metadata.name ?? ''}`;
  const strategy = runStrategyOf(vm);
  const uid = vmi?.metadata.uid;
  const stopRequest: StateChangeRequest = { action: 'Stop', ...(uid === undefined ? {} : { uid }) };
  const grace = options.gracePeriodSeconds;
  if (grace !== undefined && (!Number.isSafeInteger(grace) || grace < 0)) throw new VmStateError('API_ERR_VM_GRACE_PERIOD', `grace period: must be a whole number of seconds, at least 0 (not ${grace})`);
  switch (command) {
    case 'start':
      if (live(vmi)) throw new VmStateError('API_ERR_VM_RUNNING', `VM ${ref} is already running`);
      if (strategy === 'Halted') return { write: { kind: 'spec', running: true }, vmiGracePeriodSeconds: undefined };
      if (strategy === 'Always' || strategy === 'Once') throw new VmStateError('API_ERR_VM_STRATEGY', `VM ${ref} has runStrategy ${strategy}: it starts by itself, a start request is not accepted`);
      if (strategy === 'RerunOnFailure' && vmi?.status?.phase === 'Failed') throw new VmStateError('API_ERR_VM_STRATEGY', `VM ${ref} (runStrategy RerunOnFailure) is restarting its failed VMI by itself`);
      // A finished VMI is stopped first, so the start makes a new one.
      return { write: { kind: 'requests', requests: vmi === undefined ? [{ action: 'Start' }] : [stopRequest, { action: 'Start' }], replace: false }, vmiGracePeriodSeconds: undefined };
    case 'stop':
      if (vmi === undefined || !live(vmi)) throw new VmStateError('API_ERR_VM_NOT_RUNNING', `VM ${ref} is not running`);
      if (strategy === 'Always' || strategy === 'Once') return { write: { kind: 'spec', running: false }, vmiGracePeriodSeconds: grace };
      if (strategy === 'Halted') {
        const current = vmi.spec.terminationGracePeriodSeconds;
        if (grace === undefined || (current !== undefined && grace >= current)) {
          throw new VmStateError('API_ERR_VM_STRATEGY', `VM ${ref} has runStrategy Halted and is stopping already; only a shorter grace period is accepted`);
        }
      }
      return { write: { kind: 'requests', requests: [stopRequest], replace: true }, vmiGracePeriodSeconds: grace };
    case 'restart':
      if (grace !== undefined && grace > 0) throw new VmStateError('API_ERR_VM_GRACE_PERIOD', 'gracePeriodSeconds: a forced restart takes only 0');
      if (strategy === 'Halted' || strategy === 'Once') throw new VmStateError('API_ERR_VM_STRATEGY', `VM ${ref} has runStrategy ${strategy}: it does not restart; start it instead`);
      if (vmi === undefined) throw new VmStateError('API_ERR_VM_NOT_RUNNING', `VM ${ref} is not running`);
      return { write: { kind: 'requests', requests: [stopRequest, { action: 'Start' }], replace: false }, vmiGracePeriodSeconds: grace === undefined ? undefined : 1 };
  }
}

async function apply(api: VmStateApi, vm: VirtualMachine, write: VmStateWrite, signal: AbortSignal): Promise<'written' | 'stale'> {
  const { namespace = '', name = '' } = vm.metadata;
  if (write.kind === 'spec') {
    const spec = vm.spec.runStrategy !== undefined ? { runStrategy: write.running ? ('Always' as const) : ('Halted' as const) } : { running: write.running };
    return api.patchVmSpec(namespace, name, spec, vm.metadata.resourceVersion, signal);
  }
  const existing = vm.status?.stateChangeRequests ?? [];
  const requests = write.replace ? [...write.requests] : [...existing, ...write.requests];
  return api.replaceVmStatus({ ...vm, status: { ...vm.status, stateChangeRequests: requests } }, signal);
}

/** Reads the VM and its VMI, decides, writes; a VM that changed between read and write is read again. */
export async function changeVmState(api: VmStateApi, command: VmStateCommand, target: { readonly namespace: string; readonly name: string }, options: VmStateOptions, signal: AbortSignal): Promise<VmStatePlan> {
  const ref = `${target.namespace}/${target.name}`;
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    const vm = await api.readVm(target.namespace, target.name, signal);
    if (vm === undefined) throw new VmStateError('API_ERR_VM_NOT_FOUND', `VM ${ref} not found`);
    const vmi = await api.readVmi(target.namespace, target.name, signal);
    const plan = planVmStateChange(command, vm, vmi, options);
    if (options.dryRun === true) return plan;
    if (plan.vmiGracePeriodSeconds !== undefined && live(vmi)) await api.setVmiGracePeriod(target.namespace, target.name, plan.vmiGracePeriodSeconds, signal);
    if ((await apply(api, vm, plan.write, signal)) === 'written') return plan;
  }
  throw new VmStateError('API_ERR_VM_CONFLICT', `VM ${ref} kept changing; try again`);
}
