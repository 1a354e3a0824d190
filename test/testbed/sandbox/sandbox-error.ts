export type SandboxErrorCode =
  | 'TESTBED_CNI_FAILED'
  | 'TESTBED_NETNS_FAILED'
  | 'TESTBED_NETWORK_SETUP_FAILED';

/** A pod sandbox could not be made or removed. Match on `code`; the message is for the pod's events. */
export class SandboxError extends Error {
  override readonly name = 'SandboxError';
  readonly code: SandboxErrorCode;

  constructor(code: SandboxErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}
