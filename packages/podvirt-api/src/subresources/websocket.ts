// The server side of a WebSocket (RFC 6455) on a socket kube-apiserver's aggregator upgraded for
// console and vnc. KubeVirt's framing: subprotocol `plain.kubevirt.io`, every binary (or text)
// message is a slice of the byte stream, in order. Frames from the client are masked; ours are not.

import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { kubeStatus, type KubeStatus } from './kube-status.js';

export const PLAIN_STREAM_PROTOCOL = 'plain.kubevirt.io';
const ACCEPT_GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';
/** A frame larger than this closes the connection (1009): keystrokes and VNC input are small. */
export const MAX_FRAME_BYTES = 1024 * 1024;

export const CLOSE_NORMAL = 1000;
export const CLOSE_GOING_AWAY = 1001;
export const CLOSE_PROTOCOL_ERROR = 1002;
export const CLOSE_TOO_BIG = 1009;
export const CLOSE_INTERNAL = 1011;

/** Why an upgrade request is not a WebSocket handshake we take, or undefined when it is. */
export function handshakeProblem(req: IncomingMessage): KubeStatus | undefined {
  if ((req.headers.upgrade ?? '').toLowerCase() !== 'websocket') return kubeStatus(400, 'upgrade: only websocket');
  if (req.headers['sec-websocket-version'] !== '13') return kubeStatus(400, 'sec-websocket-version: must be 13');
  if (typeof req.headers['sec-websocket-key'] !== 'string' || req.headers['sec-websocket-key'] === '') return kubeStatus(400, 'sec-websocket-key: missing');
  const offered = offeredProtocols(req);
  if (offered.length > 0 && !offered.includes(PLAIN_STREAM_PROTOCOL)) return kubeStatus(400, `sec-websocket-protocol: only ${PLAIN_STREAM_PROTOCOL}`);
  return undefined;
}

function offeredProtocols(req: IncomingMessage): string[] {
  return (req.headers['sec-websocket-protocol'] ?? '').split(',').map((p) => p.trim()).filter((p) => p !== '');
}

export class WebSocketConnection {
  readonly #socket: Duplex;
  readonly #messageListeners: Array<(chunk: Buffer) => void> = [];
  readonly #closeListeners: Array<(code: number, reason: string) => void> = [];
  #pending: Buffer = Buffer.alloc(0);
  #closed = false;

  private constructor(socket: Duplex) {
    this.#socket = socket;
  }

  /** Completes the handshake on `socket` (handshakeProblem(req) was undefined). */
  static accept(req: IncomingMessage, socket: Duplex, head: Buffer): WebSocketConnection {
    const key = String(req.headers['sec-websocket-key']);
    const accept = createHash('sha1').update(key + ACCEPT_GUID).digest('base64');
    const protocol = offeredProtocols(req).length > 0 ? `sec-websocket-protocol: ${PLAIN_STREAM_PROTOCOL}\r\n` : '';
    socket.write(`HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\nconnection: Upgrade\r\nsec-websocket-accept: ${accept}\r\n${protocol}\r\n`);
    const ws = new WebSocketConnection(socket);
    socket.on('data', (chunk: Buffer) => ws.#receive(chunk));
    socket.on('close', () => ws.#ended(1006, 'connection lost'));
    socket.on('error', () => socket.destroy());
    if (head.length > 0) ws.#receive(head);
    return ws;
  }

  onMessage(listener: (chunk: Buffer) => void): void {
    this.#messageListeners.push(listener);
  }

  /** Once: the peer closed, we closed, or the connection broke. */
  onClose(listener: (code: number, reason: string) => void): void {
    this.#closeListeners.push(listener);
  }

  /** false: the socket's buffer is full; wait for onDrain. */
  send(chunk: Buffer): boolean {
    if (this.#closed) return true;
    return this.#socket.write(frame(0x2, chunk));
  }

  onDrain(listener: () => void): void {
    this.#socket.on('drain', listener);
  }

  /** Stop reading the client (its input waits in TCP) until resume(). */
  pause(): void {
    this.#socket.pause();
  }

  resume(): void {
    this.#socket.resume();
  }

  /** Idempotent: a close frame with `code` and `reason`, then the socket ends. */
  close(code: number, reason: string): void {
    if (this.#closed) return;
    const text = Buffer.from(reason.slice(0, 120));
    const body = Buffer.alloc(2 + text.length);
    body.writeUInt16BE(code, 0);
    text.copy(body, 2);
    this.#socket.end(frame(0x8, body));
    this.#ended(code, reason);
  }

  #ended(code: number, reason: string): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const l of this.#closeListeners) l(code, reason);
  }

  #receive(chunk: Buffer): void {
    this.#pending = this.#pending.length === 0 ? chunk : Buffer.concat([this.#pending, chunk]);
    for (;;) {
      const parsed = parseFrame(this.#pending);
      if (parsed === 'incomplete') return;
      if (typeof parsed === 'number') {
        this.close(parsed, parsed === CLOSE_TOO_BIG ? `frame larger than ${MAX_FRAME_BYTES} bytes` : 'unmasked or malformed frame');
        return;
      }
      this.#pending = this.#pending.subarray(parsed.size);
      if (!this.#handle(parsed.opcode, parsed.payload)) return;
    }
  }

  /** false once the connection is over. */
  #handle(opcode: number, payload: Buffer): boolean {
    if (opcode === 0x0 || opcode === 0x1 || opcode === 0x2) {
      if (payload.length > 0) for (const l of this.#messageListeners) l(payload);
      return !this.#closed;
    }
    if (opcode === 0x9) {
      this.#socket.write(frame(0xa, payload));
      return true;
    }
    if (opcode === 0xa) return true;
    if (opcode === 0x8) {
      const code = payload.length >= 2 ? payload.readUInt16BE(0) : CLOSE_NORMAL;
      this.close(code === 1005 || code === 1006 ? CLOSE_NORMAL : code, payload.subarray(2).toString('utf8'));
      return false;
    }
    this.close(CLOSE_PROTOCOL_ERROR, `unknown opcode ${opcode}`);
    return false;
  }
}

type Parsed = { readonly opcode: number; readonly payload: Buffer; readonly size: number } | 'incomplete' | number;

function parseFrame(buf: Buffer): Parsed {
  if (buf.length < 2) return 'incomplete';
  const b0 = buf[0] ?? 0;
  const b1 = buf[1] ?? 0;
  if ((b1 & 0x80) === 0) return CLOSE_PROTOCOL_ERROR;
  let length = b1 & 0x7f;
  let offset = 2;
  if (length === 126) {
    if (buf.length < 4) return 'incomplete';
    length = buf.readUInt16BE(2);
    offset = 4;
  } else if (length === 127) {
    if (buf.length < 10) return 'incomplete';
    const big = buf.readBigUInt64BE(2);
    if (big > BigInt(MAX_FRAME_BYTES)) return CLOSE_TOO_BIG;
    length = Number(big);
    offset = 10;
  }
  if (length > MAX_FRAME_BYTES) return CLOSE_TOO_BIG;
  if (buf.length < offset + 4 + length) return 'incomplete';
  const mask = buf.subarray(offset, offset + 4);
  const payload = Buffer.from(buf.subarray(offset + 4, offset + 4 + length));
  for (let i = 0; i < payload.length; i++) payload[i] = (payload[i] ?? 0) ^ (mask[i % 4] ?? 0);
  return { opcode: b0 & 0x0f, payload, size: offset + 4 + length };
}

function frame(opcode: number, payload: Buffer): Buffer {
  const n = payload.length;
  const header = n < 126 ? Buffer.from([0x80 | opcode, n]) : n < 65_536 ? Buffer.alloc(4) : Buffer.alloc(10);
  if (n >= 126 && n < 65_536) {
    header[0] = 0x80 | opcode;
    header[1] = 126;
    header.writeUInt16BE(n, 2);
  } else if (n >= 65_536) {
    header[0] = 0x80 | opcode;
    header[1] = 127;
    header.writeBigUInt64BE(BigInt(n), 2);
  }
  return Buffer.concat([header, payload]);
}
