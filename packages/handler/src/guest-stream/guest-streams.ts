// The node API's Console and Vnc calls: the first message names the VMI; the handler checks it
// (exists, on this node, Running, has the device), claims the VMI's one client slot, dials the
// guest's socket in the launcher pod and relays until either side ends.

import { Metadata, status, type ServerDuplexStream } from '@grpc/grpc-js';
import { vmiLogBindings } from '@podvirt/api';
import type { node } from '@podvirt/proto';
import type { Logger } from 'pino';
import { HandlerError } from '../handler-error.js';
import { toStatusObject } from '../handler-error-status.js';
import { splitObjectKey } from '@podvirt/kube-runtime';
import { connectGuestSocket, type GuestStreamKind } from './guest-socket.js';
import { DEFAULT_MAX_PENDING_BYTES, startRelay } from './guest-stream-relay.js';
import { GuestStreamSessions, type GuestSession } from './guest-stream-sessions.js';

/** What GuestStreams needs from the node API's operations. */
export interface GuestSocketResolver {
  guestSocket(ref: node.VmiRef | undefined, kind: GuestStreamKind, signal: AbortSignal): Promise<{ uid: string; key: string; path: string }>;
}

export interface GuestStreamsOptions {
  readonly resolver: GuestSocketResolver;
  readonly log: Logger;
  readonly maxPendingBytes?: number;
  /** How long a client may take to send its `open` message. */
  readonly openTimeoutMs?: number;
  readonly observe?: (method: string, code: string) => void;
}

type Call = ServerDuplexStream<node.StreamInput, node.StreamOutput>;

export class GuestStreams {
  readonly sessions = new GuestStreamSessions();
  readonly #o: GuestStreamsOptions;

  constructor(options: GuestStreamsOptions) {
    this.#o = options;
  }

  handler(kind: GuestStreamKind): (call: Call) => void {
    return (call) => void this.#serve(kind, call);
  }

  /** Ends every attached client with UNAVAILABLE; the guests are not touched. */
  close(): void {
    this.sessions.closeAll();
  }

  async #serve(kind: GuestStreamKind, call: Call): Promise<void> {
    const method = kind === 'console' ? 'Console' : 'Vnc';
    const abort = new AbortController();
    const onCancel = (): void => abort.abort(new HandlerError('HANDLER_ERR_ABORTED', 'the client cancelled the call'));
    call.once('cancelled', onCancel);
    let current: GuestSession | undefined;
    // Until the relay runs, a takeover or shutdown ends this call through the abort.
    const session: GuestSession = {
      end: (code, message) => {
        if (current !== undefined) current.end(code, message);
        else {
          abort.abort(new HandlerError('HANDLER_ERR_ABORTED', message));
          fail(call, { code, details: message, metadata: new Metadata() });
        }
      },
    };
    let claimed: { uid: string } | undefined;
    try {
      const open = await firstMessage(call, this.#o.openTimeoutMs ?? 10_000, abort.signal);
      const target = await this.#o.resolver.guestSocket(open.vmi, kind, abort.signal);
      this.sessions.claim(kind, target.uid, target.key, session, open.takeover);
      claimed = target;
      const socket = await connectGuestSocket(target.path, abort.signal);
      if (abort.signal.aborted) {
        socket.destroy();
        return;
      }
      const relay = startRelay({
        call, socket, uid: target.uid,
        maxPendingBytes: this.#o.maxPendingBytes ?? DEFAULT_MAX_PENDING_BYTES,
      });
      current = relay;
      this.#o.observe?.(method, 'OK');
      const log = this.#o.log.child({ ...vmiLogBindings({ ...splitObjectKey(target.key), uid: target.uid }), stream: kind });
      log.info('client attached');
      await relay.done;
      log.info('client detached');
    } catch (err) {
      const st = toStatusObject(err);
      this.#o.observe?.(method, status[st.code] ?? 'UNKNOWN');
      this.#o.log.debug({ err, method }, 'guest stream refused');
      fail(call, st);
    } finally {
      call.removeListener('cancelled', onCancel);
      if (claimed !== undefined) this.sessions.release(kind, claimed.uid, session);
    }
  }
}

function fail(call: Call, st: { code: status; details: string; metadata: Metadata }): void {
  if (call.cancelled || call.destroyed || call.writableEnded) return;
  call.emit('error', st);
}

function firstMessage(call: Call, timeoutMs: number, signal: AbortSignal): Promise<node.StreamOpen & { takeover: boolean }> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => done(new HandlerError('HANDLER_ERR_INVALID_REQUEST', `open: no open message within ${timeoutMs} ms`)), timeoutMs);
    const onData = (msg: node.StreamInput): void => {
      if (msg.input?.$case === 'open') done(undefined, { ...msg.input.value, takeover: msg.input.value.takeover });
      else done(new HandlerError('HANDLER_ERR_INVALID_REQUEST', 'open: the first message must be open, naming the VMI'));
    };
    const onEnd = (): void => done(new HandlerError('HANDLER_ERR_INVALID_REQUEST', 'open: the stream ended before the open message'));
    const onAbort = (): void => done(signal.reason instanceof Error ? signal.reason : new HandlerError('HANDLER_ERR_ABORTED', 'aborted'));
    const done = (err: Error | undefined, value?: node.StreamOpen & { takeover: boolean }): void => {
      clearTimeout(timer);
      call.removeListener('data', onData);
      call.removeListener('end', onEnd);
      signal.removeEventListener('abort', onAbort);
      // Later messages wait in the stream until the relay reads them.
      call.pause();
      if (err !== undefined) reject(err);
      else if (value !== undefined) resolve(value);
    };
    call.on('data', onData);
    call.once('end', onEnd);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
