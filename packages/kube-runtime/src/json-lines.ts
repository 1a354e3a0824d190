// Splits a byte stream into the newline-terminated JSON documents of a watch response. Chunk
// boundaries fall anywhere: inside a document, between CR and LF, inside a multi-byte UTF-8
// character — so bytes are decoded with a StringDecoder and only complete lines are parsed.

import { StringDecoder } from 'node:string_decoder';
import { KubeClientError } from './kube-client-error.js';

// A watch event carries one object; far beyond any object the API server stores (etcd's limit
// is 1.5 MiB), so a stream without newlines cannot grow memory without bound.
const MAX_LINE_BYTES = 16 * 1024 * 1024;

export async function* jsonLines(chunks: AsyncIterable<Buffer | string>): AsyncGenerator<unknown, void, undefined> {
  const decoder = new StringDecoder('utf8');
  let pending = '';
  for await (const chunk of chunks) {
    pending += typeof chunk === 'string' ? chunk : decoder.write(chunk);
    let newline = pending.indexOf('\n');
    while (newline >= 0) {
      const line = pending.slice(0, newline).trim();
      pending = pending.slice(newline + 1);
      if (line !== '') yield parseLine(line);
      newline = pending.indexOf('\n');
    }
    if (pending.length > MAX_LINE_BYTES) throw new KubeClientError('KUBE_ERR_BAD_RESPONSE', `a watch event longer than ${MAX_LINE_BYTES} bytes`);
  }
  const last = (pending + decoder.end()).trim();
  // An unterminated tail that parses is a complete document from a server that omits the last
  // newline; one that does not is an event cut off by a dropped connection, which is no event.
  if (last === '') return;
  let value: unknown;
  try {
    value = JSON.parse(last);
  } catch {
    return;
  }
  yield value;
}

function parseLine(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch (err) {
    throw new KubeClientError('KUBE_ERR_BAD_RESPONSE', `a watch line is not JSON: ${line.slice(0, 120)}`, { cause: err });
  }
}
