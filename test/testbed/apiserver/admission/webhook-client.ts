// One AdmissionReview POST to a webhook, over HTTPS verified against its caBundle (the system's
// roots without one), bounded by its timeoutSeconds. A failure reads as client-go's does in
// kube-apiserver's log and answer (`Post "URL": dial tcp …: connect: connection refused`,
// `context deadline exceeded`), since the message reaches the user through `failed calling webhook`.
import { request } from 'node:https';
import { isObject, type JsonObject, type JsonValue } from '../json.js';

/** The webhook could not be called or answered with something that is not an AdmissionReview. */
export class WebhookCallError extends Error {
  override readonly name = 'WebhookCallError';
  readonly code = 'TESTBED_WEBHOOK_CALL_FAILED';
}

export interface WebhookTarget {
  /** The URL as configured, or the one the Service resolves to. */
  readonly url: string;
  /** PEM bundle (decoded caBundle); undefined: the system's roots. */
  readonly ca: string | undefined;
  readonly timeoutSeconds: number;
}

const MAX_RESPONSE_BYTES = 3 * 1024 * 1024;

export async function postReview(target: WebhookTarget, review: JsonObject): Promise<JsonObject> {
  const url = new URL(target.url);
  url.searchParams.set('timeout', `${target.timeoutSeconds}s`);
  const shown = `Post "${url.toString()}"`;
  const body = JSON.stringify(review);
  const signal = AbortSignal.timeout(target.timeoutSeconds * 1000);
  return new Promise<JsonObject>((resolve, reject) => {
    const fail = (why: string, cause?: unknown): void => reject(new WebhookCallError(`failed to call webhook: ${shown}: ${why}`, { cause }));
    const req = request(url, {
      method: 'POST',
      ...(target.ca === undefined ? {} : { ca: target.ca }),
      headers: { 'Content-Type': 'application/json', Accept: 'application/json', 'Content-Length': Buffer.byteLength(body) },
      signal,
    }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_RESPONSE_BYTES) {
          res.destroy();
          fail('the response is larger than 3 MiB');
        } else chunks.push(chunk);
      });
      res.on('error', (err) => fail(signal.aborted ? 'context deadline exceeded' : err.message, err));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let parsed: JsonValue | undefined;
        try {
          parsed = JSON.parse(text) as JsonValue;
        } catch {
          parsed = undefined;
        }
        const code = res.statusCode ?? 0;
        if (code < 200 || code > 299) {
          const status = isObject(parsed) && parsed['kind'] === 'Status' ? String(parsed['message'] ?? '') : `an error on the server ("${text.slice(0, 200)}") has prevented the request from succeeding`;
          fail(status);
        } else if (!isObject(parsed)) fail(`the response is not a JSON object: ${text.slice(0, 200)}`);
        else resolve(parsed);
      });
    });
    req.on('error', (err: NodeJS.ErrnoException) => fail(describe(err, url, signal), err));
    req.end(body);
  });
}

function describe(err: NodeJS.ErrnoException, url: URL, signal: AbortSignal): string {
  if (signal.aborted) return 'context deadline exceeded';
  const hostPort = `${url.hostname.replace(/^\[|\]$/g, '')}:${url.port === '' ? '443' : url.port}`;
  switch (err.code) {
    case 'ECONNREFUSED': return `dial tcp ${hostPort}: connect: connection refused`;
    case 'ECONNRESET': return 'EOF';
    case 'ENOTFOUND': return `dial tcp: lookup ${url.hostname}: no such host`;
    case 'UNABLE_TO_VERIFY_LEAF_SIGNATURE':
    case 'SELF_SIGNED_CERT_IN_CHAIN':
    case 'DEPTH_ZERO_SELF_SIGNED_CERT':
      return 'tls: failed to verify certificate: x509: certificate signed by unknown authority';
    case 'ERR_TLS_CERT_ALTNAME_INVALID': return `tls: failed to verify certificate: x509: certificate is not valid for ${url.hostname}`;
    case 'CERT_HAS_EXPIRED': return 'tls: failed to verify certificate: x509: certificate has expired or is not yet valid';
    default: return err.message;
  }
}
