// pause, unpause, freeze, unfreeze, soft-reboot, reset: one call, one line of output.
import type { node } from '@podvirt/proto';
import type { CallOptions, VmiApi } from '../node-client.js';
import type { Invocation } from '../parse-args.js';
import { renderOperation } from '../render/operation.js';
import type { CommandResult } from './command-result.js';

type OperationInvocation = Extract<Invocation, { kind: 'operation' | 'freeze' }>;

export async function runOperation(api: VmiApi, invocation: OperationInvocation, signal?: AbortSignal): Promise<CommandResult> {
  const options: CallOptions = { timeoutMs: invocation.call.timeoutMs, signal };
  const { target } = invocation;
  if (invocation.kind === 'freeze') {
    const seconds = invocation.unfreezeTimeoutSeconds;
    const response = await api.freeze({ vmi: target, unfreezeTimeoutSeconds: seconds }, options);
    return { data: response, text: renderOperation('freeze', target, seconds), note: '' };
  }
  const response = await call(api, invocation.command, target, options);
  return { data: response, text: renderOperation(invocation.command, target), note: '' };
}

function call(
  api: VmiApi,
  command: Extract<Invocation, { kind: 'operation' }>['command'],
  target: node.VmiRef,
  options: CallOptions,
): Promise<node.OperationResponse> {
  switch (command) {
    case 'pause':
      return api.pause(target, options);
    case 'unpause':
      return api.unpause(target, options);
    case 'unfreeze':
      return api.unfreeze(target, options);
    case 'soft-reboot':
      return api.softReboot(target, options);
    case 'reset':
      return api.reset(target, options);
  }
}
