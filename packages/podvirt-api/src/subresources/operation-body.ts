// The bodies of the PUT subresources, as KubeVirt's virtctl sends them: no body or `{}` for most,
// `dryRun` (["All"]: check, do not act) on each, `unfreezeTimeout` (a Go duration) on freeze;
// for VMs `paused` (start), `gracePeriod` (stop), `gracePeriodSeconds` (restart) and
// `addedNodeSelector` (migrate); KubeVirt's AddVolumeOptions and RemoveVolumeOptions (required) for
// addvolume and removevolume, checked by `@podvirt/api`'s rules.
// Fields KubeVirt adds later are ignored, as its decoder ignores unknown fields.

import type { IncomingMessage } from 'node:http';
import { formatFieldErrors, validateAddVolumeOptions, type AddVolumeOptions, type VolumeRequest } from '@podvirt/api';
import { DurationError, parseDuration } from '@podvirt/api/duration';
import { MAX_UNFREEZE_TIMEOUT_SECONDS } from '@podvirt/proto';
import { readJsonBody } from '../server/read-json-body.js';
import { kubeStatus, type KubeStatus } from './kube-status.js';
import type { VmiOperation, VmiVolumeChange, VmSubresource } from './subresource-routes.js';

/** An options body is a few fields; anything near this is not one. */
export const MAX_OPTIONS_BYTES = 64 * 1024;

export interface OperationOptions {
  readonly dryRun: boolean;
  /** freeze only. */
  readonly unfreezeTimeoutSeconds: number;
}

export type DecodedOptions = { readonly ok: true; readonly options: OperationOptions } | { readonly ok: false; readonly status: KubeStatus };

const bad = (message: string): { readonly ok: false; readonly status: KubeStatus } => ({ ok: false, status: kubeStatus(400, message) });

export async function readOperationOptions(req: IncomingMessage, op: VmiOperation): Promise<DecodedOptions> {
  const body = await readOptionsBody(req);
  return body.ok ? decodeOperationOptions(body.value, op) : body;
}

/** The parsed JSON body, `value` undefined for none. */
async function readOptionsBody(req: IncomingMessage): Promise<{ readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly status: KubeStatus }> {
  const length = req.headers['content-length'];
  const chunked = req.headers['transfer-encoding'] !== undefined;
  if (!(length !== undefined && length !== '0' || chunked)) return { ok: true, value: undefined };
  const body = await readJsonBody(req, MAX_OPTIONS_BYTES);
  if (!body.ok) return { ok: false, status: kubeStatus(400, body.status === 413 ? `body: larger than ${MAX_OPTIONS_BYTES} bytes, options are a few fields` : body.message) };
  return { ok: true, value: body.value };
}

/** KubeVirt's StartOptions, StopOptions, RestartOptions and MigrateOptions, as far as podvirt takes them. */
export interface VmOptions {
  readonly dryRun: boolean;
  /** stop: `gracePeriod`; restart: `gracePeriodSeconds` (only 0). */
  readonly gracePeriodSeconds: number | undefined;
}

export type DecodedVmOptions = { readonly ok: true; readonly options: VmOptions } | { readonly ok: false; readonly status: KubeStatus };

export async function readVmOptions(req: IncomingMessage, op: VmSubresource): Promise<DecodedVmOptions> {
  const body = await readOptionsBody(req);
  return body.ok ? decodeVmOptions(body.value, op) : body;
}

/** `value` is the parsed JSON, undefined for no body. */
export function decodeVmOptions(value: unknown, op: VmSubresource): DecodedVmOptions {
  if (value !== undefined && (typeof value !== 'object' || value === null || Array.isArray(value))) return bad('body: must be a JSON object');
  const o = (value ?? {}) as Record<string, unknown>;
  const dryRun = decodeDryRun(o['dryRun']);
  if (typeof dryRun === 'string') return bad(dryRun);
  let gracePeriodSeconds: number | undefined;
  const graceField = op === 'stop' ? 'gracePeriod' : op === 'restart' ? 'gracePeriodSeconds' : undefined;
  if (graceField !== undefined && o[graceField] !== undefined && o[graceField] !== null) {
    const g = o[graceField];
    if (typeof g !== 'number' || !Number.isSafeInteger(g) || g < 0) return bad(`${graceField}: must be a whole number of seconds, at least 0`);
    if (op === 'restart' && g > 0) return bad('gracePeriodSeconds: a forced restart takes only 0');
    gracePeriodSeconds = g;
  }
  if (op === 'start' && o['paused'] !== undefined && o['paused'] !== null) {
    if (typeof o['paused'] !== 'boolean') return bad('paused: must be true or false');
    if (o['paused']) return bad('paused: Unsupported value: true: podvirt cannot start a VM paused; start it, then pause its VMI');
  }
  if (op === 'migrate' && o['addedNodeSelector'] !== undefined && o['addedNodeSelector'] !== null) {
    const s = o['addedNodeSelector'];
    if (typeof s !== 'object' || Array.isArray(s) || !Object.values(s).every((v) => typeof v === 'string')) return bad('addedNodeSelector: must be a map of label names to values');
    if (Object.keys(s).length > 0) return bad('addedNodeSelector: Unsupported value: podvirt\'s migrations choose their target node without one');
  }
  return { ok: true, options: { dryRun, gracePeriodSeconds } };
}

/** true/false, or the message of a 400. */
function decodeDryRun(d: unknown): boolean | string {
  if (d === undefined || d === null) return false;
  if (!Array.isArray(d) || !d.every((v) => v === 'All')) return 'dryRun: must be a list whose only value is "All"';
  return d.length > 0;
}

/** `value` is the parsed JSON, undefined for no body. */
export function decodeOperationOptions(value: unknown, op: VmiOperation): DecodedOptions {
  if (value !== undefined && (typeof value !== 'object' || value === null || Array.isArray(value))) return bad('body: must be a JSON object');
  const o = (value ?? {}) as Record<string, unknown>;
  const dryRun = decodeDryRun(o['dryRun']);
  if (typeof dryRun === 'string') return bad(dryRun);
  let unfreezeTimeoutSeconds = 0;
  if (op === 'freeze') {
    const t = o['unfreezeTimeout'];
    if (typeof t !== 'string') return bad('unfreezeTimeout: required, a duration such as "5m"');
    try {
      unfreezeTimeoutSeconds = Math.round(parseDuration(t) / 1000);
    } catch (err) {
      if (err instanceof DurationError) return bad(`unfreezeTimeout: ${err.message}`);
      throw err;
    }
    if (unfreezeTimeoutSeconds > MAX_UNFREEZE_TIMEOUT_SECONDS) return bad(`unfreezeTimeout: at most ${MAX_UNFREEZE_TIMEOUT_SECONDS}s (about 24 days)`);
  }
  return { ok: true, options: { dryRun, unfreezeTimeoutSeconds } };
}

export type DecodedVolumeRequest = { readonly ok: true; readonly request: VolumeRequest; readonly dryRun: boolean } | { readonly ok: false; readonly status: KubeStatus };

export async function readVolumeRequest(req: IncomingMessage, sub: VmiVolumeChange): Promise<DecodedVolumeRequest> {
  const body = await readOptionsBody(req);
  return body.ok ? decodeVolumeRequest(body.value, sub) : body;
}

/** `value` is the parsed JSON, undefined for no body (a 400: the options name the volume). */
export function decodeVolumeRequest(value: unknown, sub: VmiVolumeChange): DecodedVolumeRequest {
  const kind = sub === 'addvolume' ? 'AddVolumeOptions' : 'RemoveVolumeOptions';
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return bad(`body: must be a JSON object, KubeVirt's ${kind}`);
  const o = value as Record<string, unknown>;
  const dryRun = decodeDryRun(o['dryRun']);
  if (typeof dryRun === 'string') return bad(dryRun);
  if (sub === 'addvolume') {
    const errors = validateAddVolumeOptions(o);
    if (errors.length > 0) return bad(formatFieldErrors(errors));
    return { ok: true, request: { command: 'addvolume', options: o as unknown as AddVolumeOptions }, dryRun };
  }
  if (typeof o['name'] !== 'string' || o['name'] === '') return bad('name: Required value: the name of the volume to remove');
  return { ok: true, request: { command: 'removevolume', options: { name: o['name'] } }, dryRun };
}
