// The handler's one error class. Callers match on `code`, never on message text; `cause` keeps
// the underlying gRPC, HTTP or validation error.

export type HandlerErrorCode =
  /** The VMI fails local validation or the launcher answered INVALID_ARGUMENT. */
  | 'HANDLER_ERR_INVALID_VMI'
  /** The launcher has no domain for the call (gRPC NOT_FOUND). */
  | 'HANDLER_ERR_LAUNCHER_NOT_FOUND'
  /** The domain is in the wrong state for the call (gRPC FAILED_PRECONDITION). */
  | 'HANDLER_ERR_LAUNCHER_PRECONDITION'
  /** A volume the VMI needs cannot be created or prepared (the launcher's LAUNCHER_ERR_VOLUME); retrying cannot cure it. */
  | 'HANDLER_ERR_LAUNCHER_VOLUME'
  /** The launcher, its libvirt daemon or the guest agent cannot be reached right now. */
  | 'HANDLER_ERR_LAUNCHER_UNAVAILABLE'
  /** The call's deadline passed. */
  | 'HANDLER_ERR_LAUNCHER_TIMEOUT'
  /** The launcher does not implement the call. */
  | 'HANDLER_ERR_LAUNCHER_UNIMPLEMENTED'
  /** Anything else the launcher reported; the message carries libvirt's error. */
  | 'HANDLER_ERR_LAUNCHER_INTERNAL'
  /** The launcher shares no Cmd version with this handler. */
  | 'HANDLER_ERR_LAUNCHER_INCOMPATIBLE'
  /** No launcher socket (or more than one) for the VMI's active pods on this node. */
  | 'HANDLER_ERR_NO_LAUNCHER_SOCKET'
  /** The caller's AbortSignal fired or the client was closed. */
  | 'HANDLER_ERR_ABORTED'
  /** The API server refused a write on a stale resourceVersion (HTTP 409). */
  | 'HANDLER_ERR_CONFLICT'
  /** A watch's resourceVersion is too old (HTTP 410); the informer must relist. */
  | 'HANDLER_ERR_WATCH_EXPIRED'
  /** The object does not exist (HTTP 404). */
  | 'HANDLER_ERR_KUBE_NOT_FOUND'
  /** Any other API server failure. */
  | 'HANDLER_ERR_KUBE'
  /** Bad command-line flags. */
  | 'HANDLER_ERR_INVALID_ARGS'
  /** A ghost record exists for the UID with a different socket (or name); it is not replaced. */
  | 'HANDLER_ERR_GHOST_RECORD_CONFLICT'
  /** A ghost record file on disk cannot be parsed. */
  | 'HANDLER_ERR_GHOST_RECORD_INVALID'
  /** Node API: no VMI of that namespace/name exists. */
  | 'HANDLER_ERR_VMI_NOT_FOUND'
  /** Node API: the VMI runs on another node; the message names it. */
  | 'HANDLER_ERR_VMI_ELSEWHERE'
  /** Node API: the VMI is in the wrong state for the operation; the message says which. */
  | 'HANDLER_ERR_VMI_PRECONDITION'
  /** Node API: a malformed request; the message names the field. */
  | 'HANDLER_ERR_INVALID_REQUEST'
  /** A server (node API, metrics, health) could not listen. */
  | 'HANDLER_ERR_LISTEN'
  /** A device plugin could not serve on its socket or register with the kubelet. */
  | 'HANDLER_ERR_DEVICE_PLUGIN'
  /** The pod network could not be wired in the launcher pod's network namespace (retried). */
  | 'HANDLER_ERR_POD_NETWORK'
  /** The migration certificates (ca.crt, tls.crt, tls.key) are missing or do not fit together. */
  | 'HANDLER_ERR_MIGRATION_TLS'
  /** A migration proxy listener could not be opened. */
  | 'HANDLER_ERR_MIGRATION_PROXY'
  /** A hotplugged volume could not be mounted into (or unmounted from) its launcher pod. */
  | 'HANDLER_ERR_HOTPLUG';

export class HandlerError extends Error {
  readonly code: HandlerErrorCode;
  /** The gRPC status code when the error came from a launcher call. */
  readonly grpcCode: number | undefined;

  constructor(code: HandlerErrorCode, message: string, options?: { cause?: unknown; grpcCode?: number }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'HandlerError';
    this.code = code;
    this.grpcCode = options?.grpcCode;
  }
}

export function isHandlerError(err: unknown, code?: HandlerErrorCode): err is HandlerError {
  return err instanceof HandlerError && (code === undefined || err.code === code);
}
