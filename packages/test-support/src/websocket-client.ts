// A WebSocket client for tests, on a TLS socket with a client certificate (the front proxy's, or a
// user's towards kube-apiserver), or on plain TCP without a CA (the in-repo API server's HTTP):
// the handshake, masked frames out, frames in. Enough to speak KubeVirt's plain.kubevirt.io to
// podvirt-api directly or through the aggregation layer.

import { randomBytes } from 'node:crypto';
import { connect as connectPlain, type Socket } from 'node:net';
import { connect } from 'node:tls';

export interface WsFrame {
  readonly opcode: number;
  readonly payload: Buffer;
}

export interface TestWebSocket {
  /** Status line code of the answer to the upgrade request (101 when open). */
  readonly status: number;
  /** The body of a refusal. */
  readonly body: string;
  readonly protocol: string | undefined;
  send(data: Buffer | string, opcode?: number): void;
  /** Bytes as they are, for malformed frames. */
  sendRaw(bytes: Buffer): void;
  /** Frames received so far (a test waits on them with `eventually`). */
  readonly frames: WsFrame[];
  readonly closed: Promise<void>;
  destroy(): void;
}

export interface WsConnectOptions {
  /** Default 127.0.0.1. */
  readonly host?: string;
  readonly port: number;
  readonly path: string;
  /** The server's CA (TLS); without it, plain TCP. */
  readonly ca?: string;
  readonly cert?: string;
  readonly key?: string;
  readonly headers?: Readonly<Record<string, string | readonly string[]>>;
  readonly protocol?: string;
}

export function openTestWebSocket(o: WsConnectOptions): Promise<TestWebSocket> {
  return new Promise((resolve, reject) => {
    const host = o.host ?? '127.0.0.1';
    const socket: Socket = o.ca === undefined
      ? connectPlain({ host, port: o.port })
      : connect({ host, port: o.port, ca: o.ca, ...(o.cert === undefined ? {} : { cert: o.cert, key: o.key }), servername: 'localhost', checkServerIdentity: () => undefined });
    const frames: WsFrame[] = [];
    const closed = new Promise<void>((r) => socket.once('close', () => r()));
    let buf: Buffer = Buffer.alloc(0);
    let state: 'head' | 'refused' | 'open' = 'head';
    let length = Number.NaN;
    let head = '';
    socket.once('error', reject);
    socket.on('data', (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      if (state === 'head') {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        const text = buf.subarray(0, end).toString();
        head = text;
        const status = Number(/^HTTP\/1\.1 (\d+)/.exec(text)?.[1] ?? 0);
        const protocol = /\r\nsec-websocket-protocol: *([^\r]*)/i.exec(text)?.[1];
        buf = buf.subarray(end + 4);
        if (status !== 101) {
          // Whole once content-length bytes came (a server may keep the connection), or at its end.
          state = 'refused';
          length = Number(/\r\ncontent-length: *(\d+)/i.exec(text)?.[1] ?? Number.NaN);
          socket.once('end', () => resolve(result(status, buf.toString(), protocol)));
        } else {
          state = 'open';
          resolve(result(status, '', protocol));
        }
      }
      if (state === 'open') buf = parseFrames(buf, frames);
      else if (state === 'refused' && buf.length >= length) {
        resolve(result(Number(/^HTTP\/1\.1 (\d+)/.exec(head)?.[1] ?? 0), buf.toString(), undefined));
        socket.end();
      }
    });
    socket.write([
      `GET ${o.path} HTTP/1.1`, 'host: localhost', 'upgrade: websocket', 'connection: Upgrade', 'sec-websocket-version: 13',
      `sec-websocket-key: ${randomBytes(16).toString('base64')}`,
      ...(o.protocol === undefined ? [] : [`sec-websocket-protocol: ${o.protocol}`]),
      ...Object.entries(o.headers ?? {}).flatMap(([k, v]) => (typeof v === 'string' ? [v] : v).map((one) => `${k}: ${one}`)),
      '', '',
    ].join('\r\n'));

    function result(status: number, body: string, protocol: string | undefined): TestWebSocket {
      return {
        status, body, protocol, frames, closed,
        send: (data, opcode = 0x2) => socket.write(maskedFrame(opcode, Buffer.from(data))),
        sendRaw: (bytes) => socket.write(bytes),
        destroy: () => socket.destroy(),
      };
    }
  });
}

function parseFrames(buf: Buffer, out: WsFrame[]): Buffer {
  for (;;) {
    if (buf.length < 2) return buf;
    let len = (buf[1] ?? 0) & 0x7f;
    let off = 2;
    if (len === 126) {
      if (buf.length < 4) return buf;
      len = buf.readUInt16BE(2);
      off = 4;
    } else if (len === 127) {
      if (buf.length < 10) return buf;
      len = Number(buf.readBigUInt64BE(2));
      off = 10;
    }
    if (buf.length < off + len) return buf;
    out.push({ opcode: (buf[0] ?? 0) & 0x0f, payload: Buffer.from(buf.subarray(off, off + len)) });
    buf = buf.subarray(off + len);
  }
}

function maskedFrame(opcode: number, payload: Buffer): Buffer {
  const mask = randomBytes(4);
  const n = payload.length;
  const header = n < 126 ? Buffer.from([0x80 | opcode, 0x80 | n]) : Buffer.alloc(4);
  if (n >= 126) {
    header[0] = 0x80 | opcode;
    header[1] = 0x80 | 126;
    header.writeUInt16BE(n, 2);
  }
  const body = Buffer.from(payload);
  for (let i = 0; i < n; i++) body[i] = (body[i] ?? 0) ^ (mask[i % 4] ?? 0);
  return Buffer.concat([header, mask, body]);
}
