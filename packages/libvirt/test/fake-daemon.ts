// A fake libvirt daemon on a real unix socket, built from the package's own wire codec. Each
// procedure gets a handler; unhandled procedures answer with a libvirt error, as a daemon
// would for an unknown procedure.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import type { Server, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  AuthType, DrvFeature, FrameDecoder, KEEPALIVE_PROGRAM, KeepaliveProc, MessageStatus, MessageType, PROTOCOL_VERSION,
  REMOTE_PROGRAM, RemoteProc, STRING_MAX, XdrReader, decodeMessage, encodeMessage,
} from '../src/index.js';
import type { MessageHeader, XdrWriter } from '../src/index.js';

export interface Received {
  readonly header: MessageHeader;
  readonly body: Buffer;
  readonly peer: Peer;
}

export type Reply = { readonly body?: (w: XdrWriter) => void } | { readonly error: ErrorReply } | 'none';
export interface ErrorReply { readonly code: number; readonly domain?: number; readonly message: string; readonly level?: number }
export type Handler = (call: Received) => Reply | Promise<Reply>;

export class Peer {
  constructor(readonly socket: Socket) {}

  reply(header: MessageHeader, reply: Exclude<Reply, 'none'>): void {
    const isError = 'error' in reply;
    const base = { ...header, type: MessageType.REPLY, status: isError ? MessageStatus.ERROR : MessageStatus.OK };
    this.socket.write(encodeMessage(base, isError ? (w) => writeError(w, reply.error) : reply.body));
  }

  /** Sends an asynchronous MESSAGE (an event, or keepalive when `prog` says so). */
  message(prog: number, proc: number, body?: (w: XdrWriter) => void): void {
    const header = { prog, vers: PROTOCOL_VERSION, proc, type: MessageType.MESSAGE, serial: 0, status: MessageStatus.OK };
    this.socket.write(encodeMessage(header, body));
  }
}

export function writeError(w: XdrWriter, e: ErrorReply): void {
  w.int(e.code).int(e.domain ?? 10).optional(e.message, (x, s) => x.string(s, STRING_MAX)).int(e.level ?? 2);
  w.bool(false).bool(false).bool(false).bool(false).int(0).int(0).bool(false);
}

export class FakeDaemon {
  readonly dir = mkdtempSync(join(tmpdir(), 'podvirt-libvirt-'));
  readonly socketPath = join(this.dir, 'libvirt-sock');
  readonly received: Received[] = [];
  readonly peers: Peer[] = [];
  readonly handlers = new Map<number, Handler>();
  /** Whether we advertise the keepalive program (the daemon then expects our PONGs). */
  keepaliveSupported = true;
  /** Whether PINGs from the client get a PONG. */
  answerPings = true;
  readonly #server: Server;

  constructor() {
    this.#server = createServer((socket) => this.#accept(socket));
    this.handlers.set(RemoteProc.AUTH_LIST, () => ({ body: (w) => w.array([AuthType.NONE], 20, (x, v) => x.int(v)) }));
    this.handlers.set(RemoteProc.CONNECT_SUPPORTS_FEATURE, ({ body }) => {
      const feature = new XdrReader(body).int();
      return { body: (w) => w.int(feature === DrvFeature.PROGRAM_KEEPALIVE && this.keepaliveSupported ? 1 : 0) };
    });
    this.handlers.set(RemoteProc.CONNECT_OPEN, () => ({}));
    this.handlers.set(RemoteProc.CONNECT_CLOSE, () => ({}));
  }

  listen(): Promise<void> {
    return new Promise((resolve) => this.#server.listen(this.socketPath, resolve));
  }

  /** Calls of one procedure received so far. */
  calls(proc: number, prog = REMOTE_PROGRAM): Received[] {
    return this.received.filter((r) => r.header.prog === prog && r.header.proc === proc && r.header.type === MessageType.CALL);
  }

  /** Kills every client connection at once, as a dying daemon does. */
  killConnections(): void {
    for (const p of this.peers) p.socket.destroy();
  }

  async close(): Promise<void> {
    this.killConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
    rmSync(this.dir, { recursive: true, force: true });
  }

  #accept(socket: Socket): void {
    const peer = new Peer(socket);
    this.peers.push(peer);
    const decoder = new FrameDecoder();
    socket.on('error', () => undefined);
    socket.on('data', (chunk: Buffer) => {
      for (const frame of decoder.push(chunk)) {
        const { header, body } = decodeMessage(frame);
        this.received.push({ header, body, peer });
        void this.#dispatch({ header, body, peer });
      }
    });
  }

  async #dispatch(call: Received): Promise<void> {
    const { header, peer } = call;
    if (header.prog === KEEPALIVE_PROGRAM) {
      if (header.proc === KeepaliveProc.PING && this.answerPings) peer.message(KEEPALIVE_PROGRAM, KeepaliveProc.PONG);
      return;
    }
    const handler = this.handlers.get(header.proc);
    const reply = handler ? await handler(call) : { error: { code: 1, message: `no handler for ${header.proc}` } };
    if (reply !== 'none' && !peer.socket.destroyed) peer.reply(header, reply);
  }
}
