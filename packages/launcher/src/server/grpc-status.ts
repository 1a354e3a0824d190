import { status } from '@grpc/grpc-js';
import { VmiInvalidError } from '@podvirt/api';
import type { WireStatus } from '@podvirt/proto';
import { LauncherError, type LauncherErrorCode } from '../errors.js';

/** The one table from our error codes to gRPC status codes (see proto/cmd.proto for the meaning of each). */
const TABLE: Readonly<Record<LauncherErrorCode, status>> = {
  LAUNCHER_ERR_INVALID_REQUEST: status.INVALID_ARGUMENT,
  LAUNCHER_ERR_NO_DOMAIN: status.NOT_FOUND,
  LAUNCHER_ERR_WRONG_STATE: status.FAILED_PRECONDITION,
  LAUNCHER_ERR_NO_AGENT: status.FAILED_PRECONDITION,
  LAUNCHER_ERR_NO_HYPERVISOR: status.FAILED_PRECONDITION,
  LAUNCHER_ERR_NODE_LACKS: status.FAILED_PRECONDITION,
  LAUNCHER_ERR_AGENT_UNRESPONSIVE: status.UNAVAILABLE,
  LAUNCHER_ERR_DAEMON: status.UNAVAILABLE,
  LAUNCHER_ERR_CAPABILITIES: status.FAILED_PRECONDITION,
  LAUNCHER_ERR_TIMEOUT: status.DEADLINE_EXCEEDED,
  LAUNCHER_ERR_PREPARE: status.INTERNAL,
  LAUNCHER_ERR_VOLUME: status.FAILED_PRECONDITION,
  LAUNCHER_ERR_LIBVIRT: status.INTERNAL,
  LAUNCHER_ERR_HOTPLUG: status.FAILED_PRECONDITION,
};

/**
 * Any error → the status the client sees, our own code in the error-code trailer; unknown
 * errors are INTERNAL with their message.
 */
export function toGrpcStatus(err: unknown): WireStatus {
  if (err instanceof VmiInvalidError) return { code: status.INVALID_ARGUMENT, details: err.message };
  if (err instanceof LauncherError) return { code: TABLE[err.code], details: err.message, errorCode: err.code };
  return { code: status.INTERNAL, details: err instanceof Error ? err.message : String(err) };
}
