// Failures on the client side of the wire: a kubeconfig the client cannot use, a request that
// was aborted, timed out or could not reach the server, a response that is not JSON. What the
// API server itself refused is a KubeApiError instead.

export type KubeClientErrorCode =
  /** The kubeconfig or in-cluster configuration is missing, malformed or unreadable. */
  | 'KUBE_ERR_CONFIG'
  /** The kubeconfig user authenticates through an auth-provider plugin, or an exec plugin that needs a terminal, which this client does not run. */
  | 'KUBE_ERR_AUTH_PLUGIN'
  /** A proxy setting applies to the API server, and this client does not use proxies. */
  | 'KUBE_ERR_PROXY'
  /** An exec credential plugin failed or printed no usable credential. */
  | 'KUBE_ERR_EXEC_PLUGIN'
  /** The caller's AbortSignal fired. */
  | 'KUBE_ERR_ABORTED'
  /** No response (or, for a watch, no bytes) within the bound. */
  | 'KUBE_ERR_TIMEOUT'
  /** The connection failed: refused, reset, TLS handshake rejected. */
  | 'KUBE_ERR_CONNECTION'
  /** The server answered with something that is not the JSON it should be. */
  | 'KUBE_ERR_BAD_RESPONSE'
  /** The client was closed. */
  | 'KUBE_ERR_CLOSED';

export class KubeClientError extends Error {
  readonly code: KubeClientErrorCode;

  constructor(code: KubeClientErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'KubeClientError';
    this.code = code;
  }
}

export function isKubeClientError(err: unknown, code?: KubeClientErrorCode): err is KubeClientError {
  return err instanceof KubeClientError && (code === undefined || err.code === code);
}
