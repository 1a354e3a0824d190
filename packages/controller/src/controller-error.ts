// The one error class of the controller. Callers match on `code`, never on message text.

export type ControllerErrorCode =
  | 'CONTROLLER_ERR_CONFLICT'
  | 'CONTROLLER_ERR_NOT_FOUND'
  | 'CONTROLLER_ERR_API_FAILED'
  | 'CONTROLLER_ERR_INVALID_VMI'
  | 'CONTROLLER_ERR_BAD_FLAG'
  | 'CONTROLLER_ERR_CLOSED';

export class ControllerError extends Error {
  override readonly name = 'ControllerError';
  readonly code: ControllerErrorCode;

  constructor(code: ControllerErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

/** True for the optimistic-concurrency failure (HTTP 409) a caller retries on a fresh object. */
export function isConflict(err: unknown): boolean {
  return err instanceof ControllerError && err.code === 'CONTROLLER_ERR_CONFLICT';
}

export function isNotFound(err: unknown): boolean {
  return err instanceof ControllerError && err.code === 'CONTROLLER_ERR_NOT_FOUND';
}
