// Maps the Kubernetes client's failures (KubeApiError decoded from a Status, KubeClientError from
// the transport) to HandlerError codes, in one place.

import { isKubeApiError, isKubeClientError } from '@podvirt/kube-runtime';
import { HandlerError, type HandlerErrorCode } from '../handler-error.js';

const BY_KUBE_CODE: ReadonlyMap<string, HandlerErrorCode> = new Map([
  ['KUBE_ERR_NOT_FOUND', 'HANDLER_ERR_KUBE_NOT_FOUND'],
  ['KUBE_ERR_CONFLICT', 'HANDLER_ERR_CONFLICT'],
  // A watch from a resourceVersion the server no longer has: 410 with reason Expired or Gone.
  ['KUBE_ERR_EXPIRED', 'HANDLER_ERR_WATCH_EXPIRED'],
  ['KUBE_ERR_GONE', 'HANDLER_ERR_WATCH_EXPIRED'],
  ['KUBE_ERR_ABORTED', 'HANDLER_ERR_ABORTED'],
  ['KUBE_ERR_CLOSED', 'HANDLER_ERR_ABORTED'],
]);

export function fromKubeError(err: unknown, what: string): HandlerError {
  if (err instanceof HandlerError) return err;
  const code = isKubeApiError(err) || isKubeClientError(err) ? BY_KUBE_CODE.get(err.code) : undefined;
  const http = isKubeApiError(err) ? `HTTP ${err.status}: ` : '';
  const detail = err instanceof Error ? err.message : String(err);
  return new HandlerError(code ?? 'HANDLER_ERR_KUBE', `${what}: ${http}${detail}`, { cause: err });
}
