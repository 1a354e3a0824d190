// podvirtctl never reached the node API: no socket, no permission, nobody listening, or the
// TLS port cannot be reached or refused the handshake. `target` is the socket path or host:port.
export type ConnectFailure = 'socket-missing' | 'permission-denied' | 'refused' | 'timeout' | 'unreachable';

export class ConnectError extends Error {
  readonly code = 'CTL_ERR_CONNECT';
  readonly failure: ConnectFailure;
  readonly target: string;

  constructor(failure: ConnectFailure, target: string, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ConnectError';
    this.failure = failure;
    this.target = target;
  }
}
