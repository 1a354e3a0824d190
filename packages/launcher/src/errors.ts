/**
 * The launcher's errors; an invalid VMI is @podvirt/api's VmiInvalidError, as everywhere. Callers (and the gRPC status table) match on `code`, never on the
 * message text.
 */
export type LauncherErrorCode =
  | 'LAUNCHER_ERR_INVALID_REQUEST'
  | 'LAUNCHER_ERR_NO_DOMAIN'
  | 'LAUNCHER_ERR_WRONG_STATE'
  | 'LAUNCHER_ERR_NO_AGENT'
  | 'LAUNCHER_ERR_AGENT_UNRESPONSIVE'
  | 'LAUNCHER_ERR_LIBVIRT'
  | 'LAUNCHER_ERR_NO_HYPERVISOR'
  | 'LAUNCHER_ERR_NODE_LACKS'
  | 'LAUNCHER_ERR_PREPARE'
  /** A disk's volume is not what the VMI needs: missing, too small, outside the pod's mounts. */
  | 'LAUNCHER_ERR_VOLUME'
  | 'LAUNCHER_ERR_DAEMON'
  /** The compute container lacks a capability the launcher or its libvirt daemon needs. */
  | 'LAUNCHER_ERR_CAPABILITIES'
  | 'LAUNCHER_ERR_TIMEOUT'
  /** A hotplugged disk could not be attached or detached (retried; the VMI runs on). */
  | 'LAUNCHER_ERR_HOTPLUG';

export class LauncherError extends Error {
  override readonly name: string = 'LauncherError';
  readonly code: LauncherErrorCode;

  constructor(code: LauncherErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

/** The VMI is well-formed but asks for something this node cannot give; `field` names it. */
export class NodeLacksError extends LauncherError {
  override readonly name = 'NodeLacksError';
  readonly field: string;

  constructor(field: string, message: string) {
    super('LAUNCHER_ERR_NODE_LACKS', `${field}: ${message}`);
    this.field = field;
  }
}
