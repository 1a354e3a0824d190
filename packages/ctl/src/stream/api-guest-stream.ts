// A console or VNC stream through the API server: KubeVirt's `console` / `vnc` subresource, a
// websocket with subprotocol plain.kubevirt.io whose binary messages are slices of the byte
// stream (podvirt-api relays them to the handler's node API). The same GuestStreamClient as the
// node API's stream, so console and vnc run unchanged: `attached` once the upgrade is answered
// 101 (KubeVirt names no UID: ''), a refusal mapped to the NodeApiError of the status podvirt-api
// mapped it from (404 NOT_FOUND, 409 FAILED_PRECONDITION …), so the exit codes stay the same.
import { randomBytes } from 'node:crypto';
import type { Duplex } from 'node:stream';
import type { KubeClient } from '@podvirt/kube-runtime';
import { NodeApiError, type StatusName } from '../node-api-error.js';
import type { GuestStreamClient, GuestStreamKind, OpenStreamOptions, StreamEnd } from './guest-stream-client.js';

const PROTOCOL = 'plain.kubevirt.io';
const OP_TEXT = 0x1;
const OP_BINARY = 0x2;
const OP_CLOSE = 0x8;
const OP_PING = 0x9;
const OP_PONG = 0xa;
const CLOSE_NORMAL = 1000;

/** The gRPC status podvirt-api answered with this HTTP status (its statusOfHandlerError, read backwards). */
export function statusOfHttp(code: number): StatusName {
  switch (code) {
    case 400: return 'INVALID_ARGUMENT';
    case 401: return 'UNAUTHENTICATED';
    case 403: return 'PERMISSION_DENIED';
    case 404: return 'NOT_FOUND';
    case 409: return 'FAILED_PRECONDITION';
    case 503: return 'UNAVAILABLE';
    case 504: return 'DEADLINE_EXCEEDED';
    default: return 'UNKNOWN';
  }
}

/** How a websocket closed by the server reads: 1000 the stream ended, 1001 podvirt-api stopping, … */
function statusOfClose(code: number): StatusName {
  switch (code) {
    case 1001: return 'UNAVAILABLE';
    case 1009: return 'RESOURCE_EXHAUSTED';
    default: return 'UNKNOWN';
  }
}

export function openApiGuestStream(client: KubeClient, kind: GuestStreamKind, o: OpenStreamOptions): GuestStreamClient {
  const listeners: Array<(chunk: Buffer) => void> = [];
  const drainListeners: Array<() => void> = [];
  const abort = new AbortController();
  let socket: Duplex | undefined;
  let finished = false;
  let resolveEnded!: (end: StreamEnd) => void;
  const ended = new Promise<StreamEnd>((resolve) => (resolveEnded = resolve));
  const finish = (end: StreamEnd): void => {
    if (finished) return;
    finished = true;
    resolveEnded(end);
  };
  const timer = setTimeout(() => abort.abort(), o.attachTimeoutMs);
  const path = `/apis/subresources.kubevirt.io/v1/namespaces/${encodeURIComponent(o.vmi.namespace)}/virtualmachineinstances/${encodeURIComponent(o.vmi.name)}/${kind}`;
  const attached = (async (): Promise<string> => {
    let answer;
    try {
      answer = await client.upgrade({
        path, ...(o.takeover ? { query: { takeover: true } } : {}), signal: abort.signal,
        headers: { Upgrade: 'websocket', 'Sec-WebSocket-Version': '13', 'Sec-WebSocket-Key': randomBytes(16).toString('base64'), 'Sec-WebSocket-Protocol': PROTOCOL },
      });
    } catch (err) {
      const error = abort.signal.aborted
        ? new NodeApiError('DEADLINE_EXCEEDED', `not attached within ${o.attachTimeoutMs} ms`, { cause: err })
        : new NodeApiError('UNAVAILABLE', err instanceof Error ? err.message : String(err), { cause: err });
      finish({ kind: 'failed', error });
      throw error;
    } finally {
      clearTimeout(timer);
    }
    if (!answer.upgraded) {
      const error = new NodeApiError(statusOfHttp(answer.status), messageOf(answer.body, answer.status));
      finish({ kind: 'failed', error });
      throw error;
    }
    const s = answer.socket;
    socket = s;
    let buf: Buffer = answer.head;
    const onData = (chunk: Buffer): void => {
      buf = buf.length === 0 ? chunk : Buffer.concat([buf, chunk]);
      buf = readFrames(buf, (opcode, payload) => {
        if (opcode === OP_BINARY || opcode === OP_TEXT || opcode === 0x0) for (const l of listeners) l(payload);
        else if (opcode === OP_PING) s.write(frame(OP_PONG, payload));
        else if (opcode === OP_CLOSE) {
          const code = payload.length >= 2 ? payload.readUInt16BE(0) : CLOSE_NORMAL;
          const reason = payload.subarray(2).toString('utf8');
          finish(code === CLOSE_NORMAL ? { kind: 'closed' } : { kind: 'failed', error: new NodeApiError(statusOfClose(code), reason === '' ? `websocket closed with ${code}` : reason) });
          s.end(frame(OP_CLOSE, payload.subarray(0, 2)));
        }
      });
    };
    s.on('data', onData);
    s.on('drain', () => {
      for (const l of drainListeners) l();
    });
    s.on('error', () => undefined);
    s.on('close', () => finish({ kind: 'failed', error: new NodeApiError('UNAVAILABLE', 'the connection to the API server was lost') }));
    if (buf.length > 0) {
      const first = buf;
      buf = Buffer.alloc(0);
      onData(first);
    }
    return '';
  })();
  // Unhandled if the caller only awaits `ended`.
  attached.catch(() => undefined);
  return {
    attached,
    ended,
    onData: (l) => listeners.push(l),
    write: (chunk) => socket?.write(frame(OP_BINARY, chunk)) ?? false,
    onDrain: (l) => drainListeners.push(l),
    end: () => {
      if (socket === undefined) abort.abort();
      else socket.write(frame(OP_CLOSE, Buffer.from([CLOSE_NORMAL >> 8, CLOSE_NORMAL & 0xff])));
    },
    cancel: () => {
      clearTimeout(timer);
      abort.abort();
      socket?.destroy();
    },
  };
}

function messageOf(body: string, status: number): string {
  try {
    const parsed = JSON.parse(body) as { message?: unknown };
    if (typeof parsed.message === 'string') return parsed.message;
  } catch {
    // Not a Status: the body as it is.
  }
  return body.trim() === '' ? `the API server answered ${status}` : body.trim();
}

/** A masked frame (a client masks every frame). */
function frame(opcode: number, payload: Buffer): Buffer {
  const n = payload.length;
  const header = n < 126 ? Buffer.from([0x80 | opcode, 0x80 | n]) : n < 65536 ? Buffer.alloc(4) : Buffer.alloc(10);
  if (n >= 126) {
    header[0] = 0x80 | opcode;
    if (n < 65536) {
      header[1] = 0x80 | 126;
      header.writeUInt16BE(n, 2);
    } else {
      header[1] = 0x80 | 127;
      header.writeBigUInt64BE(BigInt(n), 2);
    }
  }
  const mask = randomBytes(4);
  const body = Buffer.from(payload);
  for (let i = 0; i < n; i++) body[i] = (body[i] ?? 0) ^ (mask[i % 4] ?? 0);
  return Buffer.concat([header, mask, body]);
}

/** Calls `each` for every whole (unmasked, server-sent) frame in `buf`; returns what is left. */
function readFrames(buf: Buffer, each: (opcode: number, payload: Buffer) => void): Buffer {
  let rest = buf;
  for (;;) {
    if (rest.length < 2) return rest;
    let len = (rest[1] ?? 0) & 0x7f;
    let off = 2;
    if (len === 126) {
      if (rest.length < 4) return rest;
      len = rest.readUInt16BE(2);
      off = 4;
    } else if (len === 127) {
      if (rest.length < 10) return rest;
      len = Number(rest.readBigUInt64BE(2));
      off = 10;
    }
    if (rest.length < off + len) return rest;
    each((rest[0] ?? 0) & 0x0f, rest.subarray(off, off + len));
    rest = rest.subarray(off + len);
  }
}
