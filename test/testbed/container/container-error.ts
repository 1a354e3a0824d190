export type ContainerErrorCode =
  | 'PODVIRT_CONTAINER_START_FAILED'
  | 'PODVIRT_CONTAINER_START_TIMEOUT'
  /** The container was made but its process could not be started (a missing entrypoint): the kubelet's StartError. */
  | 'PODVIRT_CONTAINER_EXEC_FAILED'
  | 'PODVIRT_CONTAINER_LEFTOVERS';

/** A test container failed to start or to stop cleanly. Match on `code`. */
export class ContainerError extends Error {
  override readonly name = 'ContainerError';
  readonly code: ContainerErrorCode;

  constructor(code: ContainerErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}
