import { Metadata, status, type handleUnaryCall, type ServerUnaryCall } from '@grpc/grpc-js';
import { ERROR_CODE_TRAILER } from '@podvirt/proto';
import { LauncherError } from '../errors.js';
import { toGrpcStatus } from './grpc-status.js';
import { malformedReason } from '@podvirt/proto';

export interface UnaryContext {
  readonly signal: AbortSignal;
}

/**
 * A unary handler with a deadline: the client's, capped by our own `maxMs`, whichever comes
 * first. The handler's promise is raced against the deadline, so the client always gets
 * DEADLINE_EXCEEDED in time even when libvirt does not answer; errors go through the status table.
 */
export function unary<Req, Res>(
  maxMs: number,
  fn: (req: Req, ctx: UnaryContext) => Promise<Res>,
  onError?: (err: unknown, call: ServerUnaryCall<Req, Res>) => void,
): handleUnaryCall<Req, Res> {
  return (call, callback) => {
    const malformed = malformedReason(call.request);
    if (malformed !== undefined) {
      callback({ code: status.INVALID_ARGUMENT, details: malformed });
      return;
    }
    const deadline = call.getDeadline();
    const clientMs = deadline instanceof Date ? deadline.getTime() - Date.now() : Number.isFinite(deadline) ? deadline - Date.now() : Infinity;
    const ms = Math.max(0, Math.min(maxMs, clientMs));
    const ac = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const err = new LauncherError('LAUNCHER_ERR_TIMEOUT', `deadline of ${ms} ms exceeded`);
        ac.abort(err);
        reject(err);
      }, ms);
    });
    const onCancel = (): void => ac.abort(new LauncherError('LAUNCHER_ERR_TIMEOUT', 'cancelled by the client'));
    call.once('cancelled', onCancel);
    Promise.race([fn(call.request, { signal: ac.signal }), expired])
      .then(
        (res) => callback(null, res),
        (err: unknown) => {
          onError?.(err, call);
          const s = toGrpcStatus(err);
          const metadata = new Metadata();
          if (s.launcherCode !== undefined) metadata.set(ERROR_CODE_TRAILER, s.launcherCode);
          callback({ code: s.code, details: s.details, metadata });
        },
      )
      .finally(() => {
        clearTimeout(timer);
        call.off('cancelled', onCancel);
      });
  };
}
