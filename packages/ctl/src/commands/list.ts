// list [-n NAMESPACE | -A]: the VMIs this node's handler knows.
import type { NodeApi } from '../node-client.js';
import type { Invocation } from '../parse-args.js';
import { renderEmptyList, renderVmiList } from '../render/vmi-list.js';
import type { CommandResult } from './command-result.js';

type ListInvocation = Extract<Invocation, { kind: 'list' }>;

export async function runList(api: NodeApi, invocation: ListInvocation, signal?: AbortSignal): Promise<CommandResult> {
  const response = await api.list({ namespace: invocation.namespace }, { timeoutMs: invocation.call.timeoutMs, signal });
  if (response.vmis.length === 0) return { data: response, text: '', note: renderEmptyList(invocation.namespace) };
  return { data: response, text: renderVmiList(response.vmis), note: '' };
}
