// `podvirtctl start|stop|restart vm NAME`: `@podvirt/api`'s changeVmState (the one decision
// podvirt-api's `virtualmachines/{start,stop,restart}` subresources make too) over the
// Kubernetes API. A stop with --force shortens the VMI's termination grace period first (to
// --grace-period, default 0).
import { changeVmState, type VmStateApi, type VmStateCommand } from '@podvirt/api';
import type { node } from '@podvirt/proto';
import type { CommandResult } from './command-result.js';

export type { VmStateCommand };

export interface StopOptions {
  /** --force: the grace period to set on the VMI before stopping (0 unless --grace-period). */
  readonly gracePeriodSeconds?: number | undefined;
}

export async function runVmState(api: VmStateApi, command: VmStateCommand, target: node.VmiRef, options: StopOptions, signal: AbortSignal): Promise<CommandResult> {
  await changeVmState(api, command, target, { gracePeriodSeconds: command === 'stop' ? options.gracePeriodSeconds : undefined }, signal);
  const done = { start: 'scheduled to start', stop: 'scheduled to stop', restart: 'scheduled to restart' }[command];
  return {
    data: { name: target.name, namespace: target.namespace, action: command },
    text: `VM ${target.name} was ${done}\n`,
    note: '',
  };
}
