// The webhooks over HTTP: POST of an AdmissionReview to one of ADMISSION_PATHS, answered with
// the review's response. A malformed review is a 400 naming the field (kube-apiserver then
// refuses the object, as failurePolicy Fail says); the decision is timed and counted.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { PodvirtApiError } from '../api-error.js';
import type { ApiMetrics } from '../metrics/api-metrics.js';
import { readJsonBody } from '../server/read-json-body.js';
import { parseReview, reviewResponse } from './admission-review.js';
import { ADMISSION_PATHS, type WebhookAdmitter } from './admitters.js';

/** The webhooks served: path → admitter. */
export type AdmissionPaths = Readonly<Record<string, WebhookAdmitter>>;

/** True when `path` is a webhook path (the caller routes it here). */
export function isAdmissionPath(path: string, admitters: AdmissionPaths = ADMISSION_PATHS): boolean {
  return Object.hasOwn(admitters, path);
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = typeof body === 'string' ? `${body}\n` : JSON.stringify(body);
  // A body refused unread must not be taken for the next request on the connection.
  const close = status === 413 ? { connection: 'close' } : {};
  res.writeHead(status, { 'content-type': typeof body === 'string' ? 'text/plain' : 'application/json', 'content-length': Buffer.byteLength(text), ...close });
  res.end(text);
}

export async function handleAdmission(path: string, req: IncomingMessage, res: ServerResponse, deps: { log: Logger; metrics: ApiMetrics; now?: () => number; admitters?: AdmissionPaths }): Promise<void> {
  const admitters = deps.admitters ?? ADMISSION_PATHS;
  const admit = Object.hasOwn(admitters, path) ? admitters[path] : undefined;
  if (admit === undefined) return send(res, 404, `no webhook at ${path}`);
  if (req.method !== 'POST') return send(res, 405, 'webhooks take POST');
  const now = deps.now ?? performance.now.bind(performance);
  const started = now();
  const body = await readJsonBody(req);
  if (!body.ok) return send(res, body.status, body.message);
  let request;
  try {
    request = parseReview(body.value);
  } catch (err) {
    if (err instanceof PodvirtApiError) return send(res, 400, err.message);
    throw err;
  }
  const result = await admit(request);
  const webhook = path.slice(1);
  deps.metrics.admission(webhook, result.allowed, (now() - started) / 1000);
  if (!result.allowed) {
    deps.log.info({ webhook, namespace: request.namespace, name: request.name, operation: request.operation, user: request.userInfo?.username, message: result.status.message }, 'admission refused');
  }
  send(res, 200, reviewResponse(request.uid, result));
}
