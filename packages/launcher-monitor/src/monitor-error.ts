/** Stable codes callers match on; messages are for people. */
export type MonitorErrorCode =
  | 'MONITOR_ERR_USAGE'
  | 'MONITOR_ERR_NATIVE'
  | 'MONITOR_ERR_SPAWN'
  /** A one-shot method was called twice. */
  | 'MONITOR_ERR_STATE';

export class MonitorError extends Error {
  override readonly name = 'MonitorError';
  readonly code: MonitorErrorCode;

  constructor(code: MonitorErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}
