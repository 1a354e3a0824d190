// The one table from the handler's errors to the node API's gRPC status codes (node.proto's
// contract), for its unary calls (node-api/) and its guest streams (guest-stream/) alike. A
// launcher's own status passes through unchanged, so a guest-agent FAILED_PRECONDITION from the
// launcher reaches podvirtctl as such.

import { Metadata, status, type StatusObject } from '@grpc/grpc-js';
import type { WireStatus } from '@podvirt/proto';
import { isHandlerError, type HandlerErrorCode } from './handler-error.js';

const TABLE: Readonly<Partial<Record<HandlerErrorCode, status>>> = {
  HANDLER_ERR_VMI_NOT_FOUND: status.NOT_FOUND,
  HANDLER_ERR_VMI_ELSEWHERE: status.FAILED_PRECONDITION,
  HANDLER_ERR_VMI_PRECONDITION: status.FAILED_PRECONDITION,
  HANDLER_ERR_INVALID_REQUEST: status.INVALID_ARGUMENT,
  HANDLER_ERR_NO_LAUNCHER_SOCKET: status.UNAVAILABLE,
  HANDLER_ERR_LAUNCHER_UNAVAILABLE: status.UNAVAILABLE,
  HANDLER_ERR_LAUNCHER_INCOMPATIBLE: status.UNAVAILABLE,
  HANDLER_ERR_ABORTED: status.CANCELLED,
  HANDLER_ERR_KUBE: status.UNAVAILABLE,
  HANDLER_ERR_KUBE_NOT_FOUND: status.NOT_FOUND,
};

export function toWireStatus(err: unknown): WireStatus {
  const details = err instanceof Error ? err.message : String(err);
  let code: status = status.INTERNAL;
  if (isHandlerError(err)) code = err.grpcCode ?? TABLE[err.code] ?? status.INTERNAL;
  // The launcher's NOT_FOUND means "no domain": the VMI exists, it is just not running one.
  if (isHandlerError(err) && err.grpcCode === status.NOT_FOUND) code = status.FAILED_PRECONDITION;
  return { code, details };
}

/** The same, as a stream's error. */
export function toStatusObject(err: unknown): StatusObject {
  const { code, details } = toWireStatus(err);
  return { code, details, metadata: new Metadata() };
}

export function statusName(code: status): string {
  return status[code] ?? 'UNKNOWN';
}
