// namespace/name → the VMI on this node, or a precise refusal: NOT_FOUND when no such VMI
// exists at all, FAILED_PRECONDITION naming the node when it runs elsewhere (the caller asked
// the wrong handler), INVALID_ARGUMENT naming the field when the reference is incomplete.

import { isDnsLabel, isDnsSubdomain, NODE_NAME_LABEL, type VirtualMachineInstance } from '@podvirt/api';
import type { node } from '@podvirt/proto';
import { HandlerError } from '../handler-error.js';

export interface VmiResolverOptions {
  readonly nodeName: string;
  /** The informer's cache of VMIs labelled for this node, by `namespace/name`. */
  readonly local: { get(key: string): VirtualMachineInstance | undefined };
  /** The API server, asked only when the VMI is not in the local cache. */
  readonly remote: { get(namespace: string, name: string, signal: AbortSignal): Promise<VirtualMachineInstance | undefined> };
}

export class VmiResolver {
  readonly #o: VmiResolverOptions;

  constructor(options: VmiResolverOptions) {
    this.#o = options;
  }

  /** `field` names the reference in the request, for INVALID_ARGUMENT messages. */
  async resolve(ref: node.VmiRef | undefined, field: string, signal: AbortSignal): Promise<VirtualMachineInstance> {
    const namespace = ref?.namespace ?? '';
    const name = ref?.name ?? '';
    checkNamespace(namespace, `${field}.namespace`);
    if (name === '') throw new HandlerError('HANDLER_ERR_INVALID_REQUEST', `${field}.name is required`);
    // Checked before any use: "." or ".." would turn the API path into another URL.
    if (!isDnsSubdomain(name)) {
      throw new HandlerError('HANDLER_ERR_INVALID_REQUEST', `${field}.name ${shown(name)} is not a valid VMI name: ${SUBDOMAIN_RULE}`);
    }
    const local = this.#o.local.get(`${namespace}/${name}`);
    if (local !== undefined && nodeOf(local) === this.#o.nodeName) return local;
    const found = await this.#o.remote.get(namespace, name, signal);
    if (found === undefined) throw new HandlerError('HANDLER_ERR_VMI_NOT_FOUND', `VMI ${namespace}/${name} not found`);
    const on = nodeOf(found);
    if (on === undefined) {
      throw new HandlerError('HANDLER_ERR_VMI_PRECONDITION', `VMI ${namespace}/${name} is not scheduled to a node yet (phase ${found.status?.phase ?? 'unset'})`);
    }
    if (on !== this.#o.nodeName) {
      throw new HandlerError('HANDLER_ERR_VMI_ELSEWHERE', `VMI ${namespace}/${name} runs on node ${on}, not on ${this.#o.nodeName}; ask the handler on ${on}`);
    }
    // On this node but not in the cache yet: the informer lags the API server by a moment.
    return found;
  }
}

const LABEL_RULE = 'lowercase letters, digits and "-", starting and ending alphanumeric, at most 63 characters';
const SUBDOMAIN_RULE = 'lowercase letters, digits, "-" and ".", each dot-separated part starting and ending alphanumeric, at most 253 characters';
const MAX_SHOWN = 64;

/** A caller's text in a message, quoted and cut: never echo a megabyte back in a status. */
export function shown(text: string): string {
  return text.length > MAX_SHOWN ? `${JSON.stringify(text.slice(0, MAX_SHOWN))}… (${text.length} characters)` : JSON.stringify(text);
}

/** A namespace as Kubernetes requires it (RFC 1123 label); `field` names it in the refusal. */
export function checkNamespace(namespace: string, field: string): void {
  if (namespace === '') throw new HandlerError('HANDLER_ERR_INVALID_REQUEST', `${field} is required`);
  if (!isDnsLabel(namespace)) throw new HandlerError('HANDLER_ERR_INVALID_REQUEST', `${field} ${shown(namespace)} is not a valid namespace: ${LABEL_RULE}`);
}

function nodeOf(vmi: VirtualMachineInstance): string | undefined {
  const node = vmi.status?.nodeName ?? vmi.metadata.labels?.[NODE_NAME_LABEL];
  return node === undefined || node === '' ? undefined : node;
}
