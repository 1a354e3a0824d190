// The one table from gRPC status codes to the handler's error codes. Every launcher call goes
// through it, so callers match on HandlerError codes and never on gRPC internals or text.

import { status, type ServiceError } from '@grpc/grpc-js';
import { ERROR_CODE_TRAILER } from '@podvirt/proto';
import { HandlerError, type HandlerErrorCode } from '../handler-error.js';

const TABLE: ReadonlyMap<status, HandlerErrorCode> = new Map([
  [status.INVALID_ARGUMENT, 'HANDLER_ERR_INVALID_VMI'],
  [status.NOT_FOUND, 'HANDLER_ERR_LAUNCHER_NOT_FOUND'],
  [status.FAILED_PRECONDITION, 'HANDLER_ERR_LAUNCHER_PRECONDITION'],
  [status.UNAVAILABLE, 'HANDLER_ERR_LAUNCHER_UNAVAILABLE'],
  [status.DEADLINE_EXCEEDED, 'HANDLER_ERR_LAUNCHER_TIMEOUT'],
  [status.UNIMPLEMENTED, 'HANDLER_ERR_LAUNCHER_UNIMPLEMENTED'],
  [status.CANCELLED, 'HANDLER_ERR_ABORTED'],
]);

// The launcher's own codes (in the ERROR_CODE_TRAILER) that mean more than their gRPC status says.
const LAUNCHER_CODES: ReadonlyMap<string, HandlerErrorCode> = new Map([
  ['LAUNCHER_ERR_VOLUME', 'HANDLER_ERR_LAUNCHER_VOLUME'],
]);

export function fromServiceError(err: ServiceError, method: string): HandlerError {
  const named = err.metadata?.get(ERROR_CODE_TRAILER)[0];
  const code = (typeof named === 'string' ? LAUNCHER_CODES.get(named) : undefined) ?? TABLE.get(err.code) ?? 'HANDLER_ERR_LAUNCHER_INTERNAL';
  // The launcher's details already name the field or the libvirt error; keep them verbatim.
  const details = err.details === '' ? status[err.code] : err.details;
  return new HandlerError(code, `${method}: ${details}`, { cause: err, grpcCode: err.code });
}
