// One socket to the daemon: framing, serial → pending-call map, keepalive, lifecycle.
// Knows nothing about individual procedures beyond their CallSpec.
import { EventEmitter } from 'node:events';
import { createConnection } from 'node:net';
import type { Socket } from 'node:net';
import { AbortError, ConnectionClosedError, ProtocolError, TimeoutError } from './errors.js';
import { Keepalive } from './keepalive.js';
import type { KeepaliveOptions } from './keepalive.js';
import { readLibvirtError } from './libvirt-error.js';
import type { CallSpec } from './wire/call-spec.js';
import { FrameDecoder } from './wire/frame-decoder.js';
import { KEEPALIVE_PROGRAM, MessageStatus, MessageType, PROTOCOL_VERSION, decodeMessage, encodeMessage } from './wire/header.js';
import type { Message, MessageHeader } from './wire/header.js';
import { KeepaliveProc } from './wire/procedures.js';
import { XdrReader } from './xdr/xdr-reader.js';

export interface CallOptions {
  readonly signal?: AbortSignal;
  /** Rejects with TimeoutError when no reply came within this many milliseconds. */
  readonly timeoutMs?: number;
}

export interface ConnectionOptions {
  readonly signal?: AbortSignal;
  /** Deadline for the socket to connect (and, in LibvirtClient.connect, for each handshake call). */
  readonly timeoutMs?: number;
  /** How long close() waits for pending calls and the socket before forcing it. */
  readonly closeTimeoutMs?: number;
}

export interface ConnectionEvents {
  /** An asynchronous MESSAGE (an event) from a program other than keepalive, in socket order. */
  message: [message: Message];
  /** The socket is gone; `error` says why when it was not a graceful close. */
  close: [error: Error | undefined];
}

interface Pending {
  readonly readRet: (r: XdrReader) => unknown;
  readonly resolve: (v: unknown) => void;
  readonly reject: (e: Error) => void;
  readonly cleanup: () => void;
}

const DEFAULT_CLOSE_TIMEOUT_MS = 5000;

export class Connection extends EventEmitter<ConnectionEvents> {
  readonly #socket: Socket;
  readonly #decoder = new FrameDecoder();
  readonly #pending = new Map<number, Pending>();
  readonly #abandoned = new Set<number>(); // aborted or timed-out serials whose reply is still due
  readonly #closeTimeoutMs: number;
  readonly #socketClosed: Promise<void>;
  #state: 'open' | 'closing' | 'closed' = 'open';
  #serial = 0;
  #closeError: Error | undefined;
  #closing: Promise<void> | undefined;
  #keepalive: Keepalive | undefined;
  #onDrained: (() => void) | undefined;

  private constructor(socket: Socket, options: ConnectionOptions) {
    super();
    this.#socket = socket;
    this.#closeTimeoutMs = options.closeTimeoutMs ?? DEFAULT_CLOSE_TIMEOUT_MS;
    this.#socketClosed = new Promise((resolve) => socket.once('close', () => resolve()));
    socket.on('data', (chunk: Buffer) => this.#onData(chunk));
    socket.on('error', (err) => { this.#closeError ??= err; });
    socket.once('close', () => this.#teardown());
  }

  /** Connects to a libvirt daemon's unix socket. */
  static async open(socketPath: string, options: ConnectionOptions = {}): Promise<Connection> {
    const socket = createConnection({ path: socketPath });
    const { signal, timeoutMs } = options;
    try {
      await new Promise<void>((resolve, reject) => {
        const done = (err?: Error): void => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
          socket.off('connect', onConnect).off('error', done);
          if (err) reject(err);
          else resolve();
        };
        const onConnect = (): void => done();
        const onAbort = (): void => done(new AbortError('connect aborted', { cause: signal?.reason }));
        const timer = timeoutMs === undefined ? undefined
          : setTimeout(() => done(new TimeoutError(`connect to ${socketPath} timed out after ${timeoutMs} ms`)), timeoutMs);
        if (signal?.aborted) return onAbort();
        signal?.addEventListener('abort', onAbort, { once: true });
        socket.once('connect', onConnect).once('error', done);
      });
    } catch (err) {
      socket.destroy();
      if (err instanceof AbortError || err instanceof TimeoutError) throw err;
      throw new ConnectionClosedError(`cannot connect to ${socketPath}`, { cause: err });
    }
    return new Connection(socket, options);
  }

  get closed(): boolean {
    return this.#state !== 'open';
  }

  /** Calls one procedure; replies are matched by serial, so calls may overlap freely. */
  call<A, R>(spec: CallSpec<A, R>, args: A, options: CallOptions = {}): Promise<R> {
    if (this.#state !== 'open') return Promise.reject(new ConnectionClosedError(undefined, { cause: this.#closeError }));
    return this.#send(spec, args, options);
  }

  #send<A, R>(spec: CallSpec<A, R>, args: A, options: CallOptions): Promise<R> {
    const { signal, timeoutMs } = options;
    if (signal?.aborted) return Promise.reject(new AbortError(undefined, { cause: signal.reason }));
    const serial = this.#nextSerial();
    let frame: Buffer;
    try {
      const header: MessageHeader = {
        prog: spec.prog, vers: PROTOCOL_VERSION, proc: spec.proc, type: MessageType.CALL, serial, status: MessageStatus.OK,
      };
      frame = encodeMessage(header, (w) => spec.writeArgs(w, args));
    } catch (err) {
      return Promise.reject(err instanceof Error ? err : new ProtocolError(String(err)));
    }
    return new Promise<R>((resolve, reject) => {
      const onAbort = (): void => this.#abandon(serial, new AbortError(undefined, { cause: signal?.reason }));
      const timer = timeoutMs === undefined ? undefined : setTimeout(
        () => this.#abandon(serial, new TimeoutError(`procedure ${spec.proc} got no reply within ${timeoutMs} ms`)),
        timeoutMs,
      );
      const cleanup = (): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#pending.set(serial, { readRet: spec.readRet, resolve: resolve as (v: unknown) => void, reject, cleanup });
      this.#socket.write(frame);
    });
  }

  /** Starts sending our own PINGs whenever the line has been idle. */
  startKeepalive(options: KeepaliveOptions): void {
    if (this.#keepalive || this.#state === 'closed') return;
    this.#keepalive = new Keepalive(options, () => this.#sendKeepalive(KeepaliveProc.PING), (err) => void this.destroy(err));
    this.#keepalive.start();
  }

  /**
   * Graceful: refuses new calls, lets pending ones finish, sends `farewell` (the client's
   * CONNECT_CLOSE) if given, then ends the socket. Idempotent; bounded by closeTimeoutMs.
   */
  close(farewell?: CallSpec<undefined, unknown>): Promise<void> {
    this.#closing ??= this.#gracefulClose(farewell);
    return this.#closing;
  }

  /** Forceful: drops the socket now; pending calls reject with ConnectionClosedError. Idempotent. */
  destroy(error?: Error): Promise<void> {
    if (this.#state !== 'closed') {
      this.#state = 'closed';
      this.#closeError ??= error;
      this.#socket.destroy();
    }
    return this.#socketClosed;
  }

  async #gracefulClose(farewell: CallSpec<undefined, unknown> | undefined): Promise<void> {
    if (this.#state !== 'open') return this.#socketClosed;
    this.#state = 'closing';
    const force = setTimeout(() => {
      void this.destroy(new TimeoutError(`close did not finish within ${this.#closeTimeoutMs} ms`));
    }, this.#closeTimeoutMs);
    try {
      if (this.#pending.size > 0) await new Promise<void>((resolve) => { this.#onDrained = resolve; });
      // A failed farewell (daemon already gone) still ends in a closed socket below.
      if (farewell && this.#state === 'closing') await this.#send(farewell, undefined, {}).catch(() => undefined);
      this.#socket.end();
      await this.#socketClosed;
    } finally {
      clearTimeout(force);
    }
  }

  /** Called whenever a pending call settles, so a graceful close can proceed. */
  #settled(): void {
    if (this.#pending.size > 0 || !this.#onDrained) return;
    const drained = this.#onDrained;
    this.#onDrained = undefined;
    drained();
  }

  #nextSerial(): number {
    do {
      this.#serial = (this.#serial + 1) >>> 0;
    } while (this.#serial === 0 || this.#pending.has(this.#serial) || this.#abandoned.has(this.#serial));
    return this.#serial;
  }

  #abandon(serial: number, error: Error): void {
    const p = this.#pending.get(serial);
    if (!p) return;
    this.#pending.delete(serial);
    this.#abandoned.add(serial);
    p.cleanup();
    p.reject(error);
    this.#settled();
  }

  #onData(chunk: Buffer): void {
    let frames: Buffer[];
    try {
      frames = this.#decoder.push(chunk);
    } catch (err) {
      void this.destroy(err as Error);
      return;
    }
    for (const frame of frames) {
      if (this.#state === 'closed') return;
      let event: Message | undefined;
      try {
        event = this.#onMessage(decodeMessage(frame));
      } catch (err) {
        void this.destroy(err instanceof ProtocolError ? err : new ProtocolError('bad message', { cause: err }));
        return;
      }
      // Outside the try: a throwing listener is the listener's bug, not a protocol error.
      if (event) this.emit('message', event);
    }
  }

  /** Handles replies and keepalive; returns an event message for the listeners. */
  #onMessage(message: Message): Message | undefined {
    const { header } = message;
    this.#keepalive?.traffic();
    if (header.vers !== PROTOCOL_VERSION) throw new ProtocolError(`unsupported protocol version ${header.vers}`);
    if (header.type === MessageType.REPLY) this.#onReply(message);
    else if (header.type === MessageType.MESSAGE && header.prog === KEEPALIVE_PROGRAM) this.#onKeepalive(header);
    else if (header.type === MessageType.MESSAGE) return message;
    // Stream packets cannot arrive: this client never opens a stream.
    return undefined;
  }

  #onReply({ header, body }: Message): void {
    const p = this.#pending.get(header.serial);
    if (!p) {
      if (this.#abandoned.delete(header.serial)) return; // its caller gave up; the reply is dropped
      throw new ProtocolError(`reply for unknown serial ${header.serial}`);
    }
    this.#pending.delete(header.serial);
    p.cleanup();
    this.#settled();
    const r = new XdrReader(body);
    try {
      if (header.status === MessageStatus.OK) {
        const value = p.readRet(r);
        r.done();
        p.resolve(value);
      } else if (header.status === MessageStatus.ERROR) {
        p.reject(readLibvirtError(r));
      } else {
        p.reject(new ProtocolError(`unexpected reply status ${header.status} for procedure ${header.proc}`));
      }
    } catch (err) {
      p.reject(new ProtocolError(`malformed reply to procedure ${header.proc}`, { cause: err }));
    }
  }

  #onKeepalive(header: MessageHeader): void {
    if (header.proc !== KeepaliveProc.PING) return; // a PONG only counts as traffic
    this.#sendKeepalive(KeepaliveProc.PONG);
  }

  #sendKeepalive(proc: number): void {
    if (this.#state === 'closed') return;
    this.#socket.write(encodeMessage({
      prog: KEEPALIVE_PROGRAM, vers: PROTOCOL_VERSION, proc, type: MessageType.MESSAGE, serial: 0, status: MessageStatus.OK,
    }));
  }

  #teardown(): void {
    const graceful = this.#state === 'closing' && this.#closeError === undefined;
    this.#state = 'closed';
    this.#keepalive?.stop();
    const cause = this.#closeError ?? (graceful ? undefined : new ConnectionClosedError('the daemon closed the connection'));
    for (const p of this.#pending.values()) {
      p.cleanup();
      p.reject(new ConnectionClosedError('libvirt connection closed before the reply', { cause }));
    }
    this.#pending.clear();
    this.#abandoned.clear();
    this.#settled();
    this.#socket.removeAllListeners('data');
    this.emit('close', cause);
  }
}
