import type { IncomingMessage } from 'node:http';
import { jsonDepthExcess } from '@podvirt/api';
import { parse as parseYaml } from 'yaml';
import { ApiError } from './errors.js';
import type { JsonValue } from './json.js';

// kube-apiserver's limit on a JSON or YAML request body (--max-request-body-bytes).
const maxBodyBytes = 3 * 1024 * 1024;

// kube-apiserver's JSON decoder refuses a body nesting deeper than 10,000 levels ("exceeded max
// depth", 400 BadRequest). This server's handlers recurse (copies, pruning, patches) and
// overflow the stack from about 2,000 levels (a 500), so it refuses sooner, in the same way: no
// Kubernetes object comes near 512 levels.
export const MAX_BODY_DEPTH = 512;

/** Reads a JSON (or YAML) request body; an empty body is `undefined`. */
export async function readBody(req: IncomingMessage): Promise<JsonValue | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buf = chunk as Buffer;
    size += buf.length;
    if (size > maxBodyBytes) throw new ApiError(413, 'RequestEntityTooLarge', `Request entity too large: limit is ${maxBodyBytes}`);
    chunks.push(buf);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return undefined;
  const type = req.headers['content-type'] ?? '';
  // kubectl's typed generators (`kubectl create namespace` …) send protobuf; only JSON and YAML are spoken here.
  if (type.includes('protobuf')) throw ApiError.unsupportedMediaType(type);
  let body: JsonValue;
  try {
    body = (type.includes('yaml') ? parseYaml(text) : JSON.parse(text)) as JsonValue;
  } catch (err) {
    // JSON.parse never overflows; the YAML parser recurses and does, a few hundred levels down
    // (it reports its own stack overflow as RESOURCE_EXHAUSTION).
    const exhausted = err instanceof RangeError || (err as { code?: unknown }).code === 'RESOURCE_EXHAUSTION';
    const why = exhausted ? `exceeded max depth of ${MAX_BODY_DEPTH} (the YAML nests deeper than this server reads)` : (err as Error).message;
    throw new ApiError(400, 'BadRequest', `the request body could not be decoded: ${why}`, undefined, { cause: err });
  }
  const deep = jsonDepthExcess(body, MAX_BODY_DEPTH);
  if (deep !== undefined) {
    throw new ApiError(400, 'BadRequest', `the request body could not be decoded: exceeded max depth of ${MAX_BODY_DEPTH} at ${deep.path} (kube-apiserver's decoder allows 10000 levels, this testbed server ${MAX_BODY_DEPTH})`);
  }
  return body;
}
