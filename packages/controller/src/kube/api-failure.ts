// One place that turns a Kubernetes client failure into a ControllerError with a stable code.

import { isKubeApiError } from '@podvirt/kube-runtime';
import { ControllerError } from '../controller-error.js';

export function apiFailure(err: unknown, what: string): ControllerError {
  if (err instanceof ControllerError) return err;
  if (isKubeApiError(err)) {
    // 409 is both Conflict (a stale resourceVersion) and AlreadyExists: either way the caller
    // works from a fresh object.
    const kind = err.status === 409 ? 'CONTROLLER_ERR_CONFLICT' : err.status === 404 ? 'CONTROLLER_ERR_NOT_FOUND' : 'CONTROLLER_ERR_API_FAILED';
    return new ControllerError(kind, `${what}: ${err.message}`, { cause: err });
  }
  return new ControllerError('CONTROLLER_ERR_API_FAILED', `${what}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
}
