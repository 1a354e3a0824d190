/** Stable codes callers match on; messages are for people. */
export type MonitorErrorCode =
  | 'PODVIRT_MONITOR_USAGE'
  | 'PODVIRT_MONITOR_NATIVE'
  | 'PODVIRT_MONITOR_SPAWN';

export class MonitorError extends Error {
  override readonly name = 'MonitorError';
  readonly code: MonitorErrorCode;

  constructor(code: MonitorErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}
