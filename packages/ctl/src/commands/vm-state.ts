// `podvirtctl start|stop|restart vm NAME`: what KubeVirt's start, stop and restart subresources
// write, so the controller sees the same thing whichever client asked (plain `kubectl patch`
// works too):
//
//   strategy        start                            stop                              restart
//   Always, Once    refused (it runs by itself)      spec: runStrategy Halted          Stop(uid) + Start requests (Once: refused)
//   RerunOnFailure  Start request (refused after     Stop(uid) request                 Stop(uid) + Start requests
//   / Manual        a failure under RerunOnFailure)
//   Halted          spec: runStrategy Always         only a shorter grace period       refused
//
// (`running: true|false` instead of runStrategy is written back as `running`.) A stop with
// --force shortens the VMI's termination grace period first (to --grace-period, default 0).
import { isFinalPhase, runStrategyOf, type StateChangeRequest, type VirtualMachine, type VirtualMachineInstance } from '@podvirt/api';
import { isKubeApiError } from '@podvirt/kube-runtime';
import type { node } from '@podvirt/proto';
import type { VmApi } from '../vm-api.js';
import type { CommandResult } from './command-result.js';

export type VmStateCommand = 'start' | 'stop' | 'restart';

export interface StopOptions {
  /** --force: the grace period to set on the VMI before stopping (0 unless --grace-period). */
  readonly gracePeriodSeconds?: number | undefined;
}

export class VmStateError extends Error {
  override readonly name = 'VmStateError';
  constructor(
    readonly code: 'CTL_ERR_VM_NOT_FOUND' | 'CTL_ERR_VM_NOT_RUNNING' | 'CTL_ERR_VM_RUNNING' | 'CTL_ERR_VM_STRATEGY' | 'CTL_ERR_VM_CONFLICT',
    message: string,
  ) {
    super(message);
  }
}

/** Attempts before a VM that keeps changing under us is reported. */
const ATTEMPTS = 3;

type Write = { readonly kind: 'requests'; readonly requests: readonly StateChangeRequest[]; readonly replace: boolean } | { readonly kind: 'spec'; readonly running: boolean };

function live(vmi: VirtualMachineInstance | undefined): vmi is VirtualMachineInstance {
  return vmi !== undefined && !isFinalPhase(vmi.status?.phase);
}

function plan(command: VmStateCommand, vm: VirtualMachine, vmi: VirtualMachineInstance | undefined, ref: string, options: StopOptions): Write {
  const strategy = runStrategyOf(vm);
  const uid = vmi?.metadata.uid;
  const stopRequest: StateChangeRequest = { action: 'Stop', ...(uid === undefined ? {} : { uid }) };
  switch (command) {
    case 'start':
      if (strategy === 'Halted') return { kind: 'spec', running: true };
      if (strategy === 'Always' || strategy === 'Once') throw new VmStateError('CTL_ERR_VM_STRATEGY', `VM ${ref} has runStrategy ${strategy}: it starts by itself, a start request is not accepted`);
      if (strategy === 'RerunOnFailure' && vmi?.status?.phase === 'Failed') throw new VmStateError('CTL_ERR_VM_STRATEGY', `VM ${ref} (runStrategy RerunOnFailure) is restarting its failed VMI by itself`);
      if (live(vmi)) throw new VmStateError('CTL_ERR_VM_RUNNING', `VM ${ref} is already running`);
      // A finished VMI is stopped first, so the start makes a new one.
      return { kind: 'requests', requests: vmi === undefined ? [{ action: 'Start' }] : [stopRequest, { action: 'Start' }], replace: false };
    case 'stop':
      if (!live(vmi)) throw new VmStateError('CTL_ERR_VM_NOT_RUNNING', `VM ${ref} is not running`);
      if (strategy === 'Always' || strategy === 'Once') return { kind: 'spec', running: false };
      if (strategy === 'Halted' && options.gracePeriodSeconds === undefined) {
        throw new VmStateError('CTL_ERR_VM_STRATEGY', `VM ${ref} has runStrategy Halted and is stopping already; only --force with a shorter --grace-period is accepted`);
      }
      return { kind: 'requests', requests: [stopRequest], replace: true };
    case 'restart':
      if (strategy === 'Halted' || strategy === 'Once') throw new VmStateError('CTL_ERR_VM_STRATEGY', `VM ${ref} has runStrategy ${strategy}: it does not restart; use "podvirtctl start vm ${vm.metadata.name ?? ''}"`);
      if (vmi === undefined) throw new VmStateError('CTL_ERR_VM_NOT_RUNNING', `VM ${ref} is not running`);
      return { kind: 'requests', requests: [stopRequest, { action: 'Start' }], replace: false };
  }
}

async function apply(api: VmApi, vm: VirtualMachine, write: Write, signal: AbortSignal): Promise<void> {
  const { namespace = '', name = '' } = vm.metadata;
  if (write.kind === 'spec') {
    const spec = vm.spec.runStrategy !== undefined ? { runStrategy: write.running ? ('Always' as const) : ('Halted' as const) } : { running: write.running };
    await api.patchVmSpec(namespace, name, spec, vm.metadata.resourceVersion, signal);
    return;
  }
  const existing = vm.status?.stateChangeRequests ?? [];
  const requests = write.replace ? [...write.requests] : [...existing, ...write.requests];
  await api.replaceVmStatus({ ...vm, status: { ...vm.status, stateChangeRequests: requests } }, signal);
}

export async function runVmState(api: VmApi, command: VmStateCommand, target: node.VmiRef, options: StopOptions, signal: AbortSignal): Promise<CommandResult> {
  const ref = `${target.namespace}/${target.name}`;
  for (let attempt = 1; ; attempt++) {
    const vm = await api.readVm(target.namespace, target.name, signal);
    if (vm === undefined) throw new VmStateError('CTL_ERR_VM_NOT_FOUND', `VM ${ref} not found`);
    const vmi = await api.readVmi(target.namespace, target.name, signal);
    const write = plan(command, vm, vmi, ref, options);
    if (command === 'stop' && options.gracePeriodSeconds !== undefined && live(vmi)) {
      await api.setVmiGracePeriod(target.namespace, target.name, options.gracePeriodSeconds, signal);
    }
    try {
      await apply(api, vm, write, signal);
    } catch (err) {
      // The VM changed between the read and the write: decide again on the fresh one.
      if (isKubeApiError(err) && err.status === 409 && attempt < ATTEMPTS) continue;
      if (isKubeApiError(err) && err.status === 409) throw new VmStateError('CTL_ERR_VM_CONFLICT', `VM ${ref} kept changing; try again`);
      throw err;
    }
    const done = { start: 'scheduled to start', stop: 'scheduled to stop', restart: 'scheduled to restart' }[command];
    return {
      data: { name: target.name, namespace: target.namespace, action: command },
      text: `VM ${target.name} was ${done}\n`,
      note: '',
    };
  }
}
