// A request the API server refused, decoded from the metav1.Status it sends back. Callers match
// on `code` (derived from the Status `reason`, falling back to the HTTP status as apimachinery's
// errors package does), never on the message.

export type KubeApiErrorCode =
  | 'KUBE_ERR_BAD_REQUEST'
  | 'KUBE_ERR_UNAUTHORIZED'
  | 'KUBE_ERR_FORBIDDEN'
  | 'KUBE_ERR_NOT_FOUND'
  | 'KUBE_ERR_METHOD_NOT_ALLOWED'
  | 'KUBE_ERR_ALREADY_EXISTS'
  | 'KUBE_ERR_CONFLICT'
  /** 410 with reason Gone: the resource version is no longer available. */
  | 'KUBE_ERR_GONE'
  /** 410 with reason Expired: a watch or continue token fell out of the server's history. */
  | 'KUBE_ERR_EXPIRED'
  | 'KUBE_ERR_UNSUPPORTED_MEDIA_TYPE'
  | 'KUBE_ERR_INVALID'
  | 'KUBE_ERR_TOO_MANY_REQUESTS'
  | 'KUBE_ERR_INTERNAL'
  | 'KUBE_ERR_SERVICE_UNAVAILABLE'
  | 'KUBE_ERR_TIMEOUT_SERVER'
  | 'KUBE_ERR_UNKNOWN';

export interface KubeStatusDetails {
  readonly name?: string;
  readonly group?: string;
  readonly kind?: string;
  readonly uid?: string;
  readonly causes?: ReadonlyArray<{ readonly reason?: string; readonly message?: string; readonly field?: string }>;
  readonly retryAfterSeconds?: number;
}

const BY_REASON: ReadonlyMap<string, KubeApiErrorCode> = new Map([
  ['BadRequest', 'KUBE_ERR_BAD_REQUEST'],
  ['Unauthorized', 'KUBE_ERR_UNAUTHORIZED'],
  ['Forbidden', 'KUBE_ERR_FORBIDDEN'],
  ['NotFound', 'KUBE_ERR_NOT_FOUND'],
  ['MethodNotAllowed', 'KUBE_ERR_METHOD_NOT_ALLOWED'],
  ['AlreadyExists', 'KUBE_ERR_ALREADY_EXISTS'],
  ['Conflict', 'KUBE_ERR_CONFLICT'],
  ['Gone', 'KUBE_ERR_GONE'],
  ['Expired', 'KUBE_ERR_EXPIRED'],
  ['UnsupportedMediaType', 'KUBE_ERR_UNSUPPORTED_MEDIA_TYPE'],
  ['Invalid', 'KUBE_ERR_INVALID'],
  ['TooManyRequests', 'KUBE_ERR_TOO_MANY_REQUESTS'],
  ['InternalError', 'KUBE_ERR_INTERNAL'],
  ['ServiceUnavailable', 'KUBE_ERR_SERVICE_UNAVAILABLE'],
  ['Timeout', 'KUBE_ERR_TIMEOUT_SERVER'],
  ['ServerTimeout', 'KUBE_ERR_TIMEOUT_SERVER'],
]);

const BY_HTTP_STATUS: ReadonlyMap<number, KubeApiErrorCode> = new Map([
  [400, 'KUBE_ERR_BAD_REQUEST'],
  [401, 'KUBE_ERR_UNAUTHORIZED'],
  [403, 'KUBE_ERR_FORBIDDEN'],
  [404, 'KUBE_ERR_NOT_FOUND'],
  [405, 'KUBE_ERR_METHOD_NOT_ALLOWED'],
  [409, 'KUBE_ERR_CONFLICT'],
  [410, 'KUBE_ERR_GONE'],
  [415, 'KUBE_ERR_UNSUPPORTED_MEDIA_TYPE'],
  [422, 'KUBE_ERR_INVALID'],
  [429, 'KUBE_ERR_TOO_MANY_REQUESTS'],
  [500, 'KUBE_ERR_INTERNAL'],
  [503, 'KUBE_ERR_SERVICE_UNAVAILABLE'],
  [504, 'KUBE_ERR_TIMEOUT_SERVER'],
]);

export class KubeApiError extends Error {
  readonly code: KubeApiErrorCode;
  /** The HTTP status (for a watch ERROR event: the Status `code`). */
  readonly status: number;
  /** The Status `reason`, '' when the server sent none. */
  readonly reason: string;
  readonly details: KubeStatusDetails | undefined;

  constructor(status: number, reason: string, message: string, details?: KubeStatusDetails) {
    super(message);
    this.name = 'KubeApiError';
    this.status = status;
    this.reason = reason;
    this.details = details;
    this.code = BY_REASON.get(reason) ?? BY_HTTP_STATUS.get(status) ?? 'KUBE_ERR_UNKNOWN';
  }

  /**
   * The error a response body describes: a metav1.Status when the server sent one, else the
   * HTTP status with the body's text (a proxy's HTML page, a plain "404 page not found").
   */
  static from(httpStatus: number, body: unknown, what: string): KubeApiError {
    if (isStatus(body)) {
      const code = typeof body.code === 'number' && body.code !== 0 ? body.code : httpStatus;
      return new KubeApiError(code, body.reason ?? '', body.message ?? `${what}: HTTP ${code}`, body.details);
    }
    const text = typeof body === 'string' ? body.trim().slice(0, 200) : '';
    return new KubeApiError(httpStatus, '', `${what}: HTTP ${httpStatus}${text === '' ? '' : `: ${text}`}`);
  }
}

interface StatusBody {
  kind: 'Status';
  code?: number;
  reason?: string;
  message?: string;
  details?: KubeStatusDetails;
}

export function isStatus(value: unknown): value is StatusBody {
  return typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === 'Status';
}

export function isKubeApiError(err: unknown, code?: KubeApiErrorCode): err is KubeApiError {
  return err instanceof KubeApiError && (code === undefined || err.code === code);
}
