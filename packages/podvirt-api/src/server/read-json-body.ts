// A request body read as JSON, bounded: kube-apiserver sends objects of at most 3 MiB (etcd's
// request limit), so anything larger is refused before it is buffered whole.

import type { IncomingMessage } from 'node:http';

export const MAX_BODY_BYTES = 3 * 1024 * 1024 + 64 * 1024;

export type JsonBody = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly status: number; readonly message: string };

export async function readJsonBody(req: IncomingMessage, maxBytes = MAX_BODY_BYTES): Promise<JsonBody> {
  const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim();
  if (type !== 'application/json') return { ok: false, status: 415, message: `content-type must be application/json, got ${JSON.stringify(type ?? '')}` };
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > maxBytes) return { ok: false, status: 413, message: `body larger than ${maxBytes} bytes` };
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) {
      req.destroy();
      return { ok: false, status: 413, message: `body larger than ${maxBytes} bytes` };
    }
    chunks.push(chunk);
  }
  try {
    return { ok: true, value: JSON.parse(Buffer.concat(chunks).toString('utf8')) };
  } catch (err) {
    return { ok: false, status: 400, message: `body: not valid JSON: ${err instanceof Error ? err.message : String(err)}` };
  }
}
