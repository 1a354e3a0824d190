// The one server side of a unary call, for every podvirt gRPC server: the method gets an
// AbortSignal (the client cancelled, or the server's own bound passed), a request that did not
// decode is INVALID_ARGUMENT before the method sees it (see malformed-request.ts), and every
// failure leaves through the server's one status table, its own error code in the
// ERROR_CODE_TRAILER. The client side of the same contract is promise-client.ts.

import { Metadata, status, type handleUnaryCall } from '@grpc/grpc-js';
import { CallEndedError } from './call-ended-error.js';
import { ERROR_CODE_TRAILER } from './error-code-trailer.js';
import { malformedReason } from './malformed-request.js';
import { OpTrace } from './op-trace.js';

/** What a client sees of a failure. */
export interface WireStatus {
  readonly code: status;
  readonly details: string;
  /** The server's own error code, so that the client tells failures apart by code, not text. */
  readonly errorCode?: string | undefined;
}

/** How one call ended, for the server's logs and metrics. */
export interface SettledCall {
  /** The name the server gave the method. */
  readonly method: string;
  /** The call's path, `/package.Service/Method`. */
  readonly path: string;
  readonly code: status;
  /** The error the method failed with; undefined when it succeeded. */
  readonly err?: unknown;
}

export interface UnaryHandlerOptions {
  /** The server's one mapping from what a method throws to what the client sees. */
  readonly toStatus: (err: unknown) => WireStatus;
  /**
   * The server's own bound on the call, whatever the client's deadline: when the earlier of the
   * two passes, the signal aborts with `expired(ms)` and the client gets that error's status at
   * once, even while the work behind it (libvirt) does not answer. Unset: the client's
   * deadline alone.
   */
  readonly maxMs?: number | undefined;
  /** The error of a call cut at its bound; a CallEndedError (PROTO_ERR_CALL_DEADLINE) when unset. */
  readonly expired?: ((ms: number) => Error) | undefined;
  /** The reason the signal aborts with when the client cancels; a CallEndedError (PROTO_ERR_CALL_CANCELLED) when unset. */
  readonly cancelled?: (() => Error) | undefined;
  readonly onSettled?: ((call: SettledCall) => void) | undefined;
  /**
   * Set, every call is traced (op-trace.ts; servers set it only in a process run with
   * PODVIRT_TRACE_OPS=1): its steps go here once the answer is handed to grpc-js, the last
   * step `answered`.
   */
  readonly onTrace?: ((method: string, trace: OpTrace) => void) | undefined;
}

export interface UnaryContext {
  readonly signal: AbortSignal;
  /** This call's step trace, when the process traces (op-trace.ts); the method marks its awaits. */
  readonly trace?: OpTrace | undefined;
}

export type UnaryMethodBody<Req, Res> = (request: Req, ctx: UnaryContext) => Promise<Res> | Res;

/** A grpc-js unary handler running `run` under `options` (above). */
export function unaryHandler<Req, Res>(method: string, run: UnaryMethodBody<Req, Res>, options: UnaryHandlerOptions): handleUnaryCall<Req, Res> {
  return (call, callback) => {
    const malformed = malformedReason(call.request);
    if (malformed !== undefined) {
      callback({ code: status.INVALID_ARGUMENT, details: malformed });
      return;
    }
    const ac = new AbortController();
    const onCancel = (): void => ac.abort(options.cancelled?.() ?? new CallEndedError('PROTO_ERR_CALL_CANCELLED', 'the client cancelled the call'));
    call.once('cancelled', onCancel);
    const bound = options.maxMs === undefined ? undefined : boundOf(options.maxMs, call.getDeadline());
    let timer: NodeJS.Timeout | undefined;
    const trace = options.onTrace === undefined ? undefined : new OpTrace();
    const work = (async () => run(call.request, { signal: ac.signal, trace }))();
    const raced = bound === undefined ? work : Promise.race([work, new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const err = options.expired?.(bound) ?? new CallEndedError('PROTO_ERR_CALL_DEADLINE', `deadline of ${bound} ms exceeded`);
        ac.abort(err);
        reject(err);
      }, bound);
    })]);
    const settled = (code: status, err?: unknown): void => options.onSettled?.({ method, path: call.getPath(), code, ...(err === undefined ? {} : { err }) });
    raced
      .then(
        (res) => {
          settled(status.OK);
          callback(null, res);
          if (trace !== undefined) {
            trace.mark('answered');
            options.onTrace?.(method, trace);
          }
        },
        (err: unknown) => {
          const wire = options.toStatus(err);
          settled(wire.code, err);
          const metadata = new Metadata();
          if (wire.errorCode !== undefined) metadata.set(ERROR_CODE_TRAILER, wire.errorCode);
          callback({ code: wire.code, details: wire.details, metadata });
        },
      )
      .finally(() => {
        clearTimeout(timer);
        call.off('cancelled', onCancel);
      });
  };
}

/** The server's bound, or the client's deadline when that comes first (ms from now, at least 0). */
function boundOf(maxMs: number, deadline: Date | number): number {
  const clientMs = deadline instanceof Date ? deadline.getTime() - Date.now() : Number.isFinite(deadline) ? deadline - Date.now() : Infinity;
  return Math.max(0, Math.min(maxMs, clientMs));
}
