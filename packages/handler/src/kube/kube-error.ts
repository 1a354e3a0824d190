// Maps @kubernetes/client-node failures (ApiException with an HTTP code, a watch's statusCode,
// a watch ERROR event's Status) to HandlerError codes, in one place.

import { HandlerError, type HandlerErrorCode } from '../handler-error.js';

const BY_HTTP_CODE: ReadonlyMap<number, HandlerErrorCode> = new Map([
  [404, 'HANDLER_ERR_KUBE_NOT_FOUND'],
  [409, 'HANDLER_ERR_CONFLICT'],
  [410, 'HANDLER_ERR_WATCH_EXPIRED'],
]);

export function httpCodeOf(err: unknown): number | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const e = err as { code?: unknown; statusCode?: unknown };
  if (typeof e.code === 'number') return e.code;
  if (typeof e.statusCode === 'number') return e.statusCode;
  return undefined;
}

export function fromKubeError(err: unknown, what: string): HandlerError {
  if (err instanceof HandlerError) return err;
  const http = httpCodeOf(err);
  const code = (http === undefined ? undefined : BY_HTTP_CODE.get(http)) ?? 'HANDLER_ERR_KUBE';
  const detail = err instanceof Error ? err.message : String(err);
  return new HandlerError(code, `${what}: ${http === undefined ? '' : `HTTP ${http}: `}${detail}`, { cause: err });
}
