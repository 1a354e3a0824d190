export type CallEndedCode = 'PROTO_ERR_CALL_CANCELLED' | 'PROTO_ERR_CALL_DEADLINE';

/**
 * Why a served call's AbortSignal fired, unless the server names its own error (unaryHandler's
 * `cancelled` and `expired`): the client cancelled it, or the server's bound passed.
 */
export class CallEndedError extends Error {
  override readonly name = 'CallEndedError';
  readonly code: CallEndedCode;

  constructor(code: CallEndedCode, message: string) {
    super(message);
    this.code = code;
  }
}
