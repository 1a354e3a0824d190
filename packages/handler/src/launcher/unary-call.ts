// grpc-js has no AbortSignal: this turns a unary call into a promise with a deadline, cancels
// the call when the signal aborts, and maps the status through the one error table.

import { Metadata, status, type CallOptions, type ClientUnaryCall, type ServiceError } from '@grpc/grpc-js';
import { HandlerError } from '../handler-error.js';
import { fromServiceError } from './grpc-error.js';

export interface CallLimits {
  /** The call's deadline, relative to now. */
  readonly timeoutMs: number;
  readonly signal?: AbortSignal | undefined;
  /** Told every call's method, gRPC status name ('OK' on success) and duration (metrics). */
  readonly observe?: CallObserver | undefined;
}

export type CallObserver = (method: string, code: string, seconds: number) => void;

export type UnaryMethod<Req, Res> = (
  request: Req,
  metadata: Metadata,
  options: Partial<CallOptions>,
  callback: (error: ServiceError | null, response: Res) => void,
) => ClientUnaryCall;

export function unaryCall<Req, Res>(name: string, method: UnaryMethod<Req, Res>, request: Req, limits: CallLimits): Promise<Res> {
  const { signal } = limits;
  if (signal?.aborted === true) {
    return Promise.reject(new HandlerError('HANDLER_ERR_ABORTED', `${name}: aborted before the call`, { cause: signal.reason }));
  }
  return new Promise<Res>((resolve, reject) => {
    const onAbort = (): void => call.cancel();
    const started = performance.now();
    const call = method(request, new Metadata(), { deadline: Date.now() + limits.timeoutMs }, (err, res) => {
      signal?.removeEventListener('abort', onAbort);
      limits.observe?.(name, err === null ? 'OK' : (status[err.code] ?? 'UNKNOWN'), (performance.now() - started) / 1000);
      if (err === null) resolve(res);
      else reject(fromServiceError(err, name));
    });
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
