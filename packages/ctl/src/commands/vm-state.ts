// `podvirtctl start|stop|restart vm NAME`: `@podvirt/api`'s changeVmState (the one decision
// podvirt-api's `virtualmachines/{start,stop,restart}` subresources make too) over the
// Kubernetes API. A stop with --force shortens the VMI's termination grace period first (to
// --grace-period, default 0).
import { changeVmState, type VmStateApi, type VmStateCommand } from '@podvirt/api';
import type { node } from '@podvirt/proto';
import type { SubresourceClient } from '../subresource-client.js';
import type { CommandResult } from './command-result.js';

export type { VmStateCommand };

export interface StopOptions {
  /** --force: the grace period to set on the VMI before stopping (0 unless --grace-period). */
  readonly gracePeriodSeconds?: number | undefined;
}

export async function runVmState(api: VmStateApi, command: VmStateCommand, target: node.VmiRef, options: StopOptions, signal: AbortSignal): Promise<CommandResult> {
  await changeVmState(api, command, target, { gracePeriodSeconds: command === 'stop' ? options.gracePeriodSeconds : undefined }, signal);
  return scheduled(command, target);
}

/**
 * The same through KubeVirt's `virtualmachines/{start,stop,restart}` subresource (a kubeconfig:
 * authorised as the user, podvirt-api makes the same decision); `--force` is StopOptions'
 * `gracePeriod`. A refusal (409 already running …) is the API server's message.
 */
export async function runVmStateViaApi(api: SubresourceClient, command: VmStateCommand, target: node.VmiRef, options: StopOptions, signal: AbortSignal): Promise<CommandResult> {
  const grace = command === 'stop' ? options.gracePeriodSeconds : undefined;
  await api.change('virtualmachines', target, command, grace === undefined ? undefined : { gracePeriod: grace }, signal);
  return scheduled(command, target);
}

/** `podvirtctl migrate vm NAME` with a kubeconfig: KubeVirt's `virtualmachines/NAME/migrate`, which creates the VMI's migration. */
export async function runMigrateVmViaApi(api: SubresourceClient, target: node.VmiRef, signal: AbortSignal): Promise<CommandResult> {
  await api.change('virtualmachines', target, 'migrate', undefined, signal);
  return scheduled('migrate', target);
}

/** The answer (202) has no body: what was asked, and where to watch it happen. */
function scheduled(command: VmStateCommand | 'migrate', target: node.VmiRef): CommandResult {
  return {
    data: { name: target.name, namespace: target.namespace, action: command },
    text: `VM ${target.name} was scheduled to ${command}\n`,
    note: command === 'migrate'
      ? `follow it with: kubectl get vmim -n ${target.namespace} -w\n`
      : `follow it with: kubectl get vm ${target.name} -n ${target.namespace} -w\n`,
  };
}
