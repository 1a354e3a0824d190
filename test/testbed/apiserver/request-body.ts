import type { IncomingMessage } from 'node:http';
import { parse as parseYaml } from 'yaml';
import { ApiError } from './errors.js';
import type { JsonValue } from './json.js';

// kube-apiserver's limit on a JSON or YAML request body (--max-request-body-bytes).
const maxBodyBytes = 3 * 1024 * 1024;

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
  try {
    if (type.includes('yaml')) return parseYaml(text) as JsonValue;
    return JSON.parse(text) as JsonValue;
  } catch (err) {
    throw new ApiError(400, 'BadRequest', `the request body could not be decoded: ${(err as Error).message}`, undefined, { cause: err });
  }
}
