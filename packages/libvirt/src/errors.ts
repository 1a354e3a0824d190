// Transport-level failures: the call never got a libvirt answer. Each class has a stable
// `code` to match on (never the message) and keeps what caused it in `cause`.

/** The connection is closed, closing, or died while the call was pending. */
export class ConnectionClosedError extends Error {
  readonly code = 'LIBVIRT_ERR_CLOSED';
  override readonly name = 'ConnectionClosedError';
  constructor(message = 'libvirt connection closed', options?: ErrorOptions) {
    super(message, options);
  }
}

/** The caller's AbortSignal fired; `cause` is the signal's reason. */
export class AbortError extends Error {
  readonly code = 'LIBVIRT_ERR_ABORTED';
  override readonly name = 'AbortError';
  constructor(message = 'libvirt call aborted', options?: ErrorOptions) {
    super(message, options);
  }
}

/** A deadline passed: a call timeout, a connect timeout, or the keepalive gave up. */
export class TimeoutError extends Error {
  readonly code = 'LIBVIRT_ERR_TIMEOUT';
  override readonly name = 'TimeoutError';
  constructor(message = 'libvirt operation timed out', options?: ErrorOptions) {
    super(message, options);
  }
}

/** The peer sent something that breaks the wire protocol (bad frame, header or body). */
export class ProtocolError extends Error {
  readonly code = 'LIBVIRT_ERR_PROTOCOL';
  override readonly name = 'ProtocolError';
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
  }
}

/** XDR data could not be encoded or decoded (short buffer, over a declared maximum). */
export class XdrError extends Error {
  readonly code = 'LIBVIRT_ERR_XDR';
  override readonly name = 'XdrError';
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
  }
}
