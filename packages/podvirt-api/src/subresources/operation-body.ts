// The bodies of the PUT subresources, as KubeVirt's virtctl sends them: no body or `{}` for most,
// `dryRun` (["All"]: check, do not act) on each, `unfreezeTimeout` (a Go duration) on freeze.
// Fields KubeVirt adds later are ignored, as its decoder ignores unknown fields.

import type { IncomingMessage } from 'node:http';
import { DurationError, parseDuration } from '@podvirt/api/duration';
import { MAX_UNFREEZE_TIMEOUT_SECONDS } from '@podvirt/proto';
import { readJsonBody } from '../server/read-json-body.js';
import { kubeStatus, type KubeStatus } from './kube-status.js';
import type { VmiOperation } from './subresource-routes.js';

/** An options body is a few fields; anything near this is not one. */
export const MAX_OPTIONS_BYTES = 64 * 1024;

export interface OperationOptions {
  readonly dryRun: boolean;
  /** freeze only. */
  readonly unfreezeTimeoutSeconds: number;
}

export type DecodedOptions = { readonly ok: true; readonly options: OperationOptions } | { readonly ok: false; readonly status: KubeStatus };

const bad = (message: string): DecodedOptions => ({ ok: false, status: kubeStatus(400, message) });

export async function readOperationOptions(req: IncomingMessage, op: VmiOperation): Promise<DecodedOptions> {
  const length = req.headers['content-length'];
  const chunked = req.headers['transfer-encoding'] !== undefined;
  let value: unknown;
  if (length !== undefined && length !== '0' || chunked) {
    const body = await readJsonBody(req, MAX_OPTIONS_BYTES);
    if (!body.ok) return bad(body.status === 413 ? `body: larger than ${MAX_OPTIONS_BYTES} bytes, options are a few fields` : body.message);
    value = body.value;
  }
  return decodeOperationOptions(value, op);
}

/** `value` is the parsed JSON, undefined for no body. */
export function decodeOperationOptions(value: unknown, op: VmiOperation): DecodedOptions {
  if (value !== undefined && (typeof value !== 'object' || value === null || Array.isArray(value))) return bad('body: must be a JSON object');
  const o = (value ?? {}) as Record<string, unknown>;
  let dryRun = false;
  if (o['dryRun'] !== undefined && o['dryRun'] !== null) {
    const d = o['dryRun'];
    if (!Array.isArray(d) || !d.every((v) => v === 'All')) return bad('dryRun: must be a list whose only value is "All"');
    dryRun = d.length > 0;
  }
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
