import type { JsonObject } from './json.js';

export interface StatusCause {
  reason: string;
  message: string;
  field?: string;
}

export interface ResourceRef {
  group: string;
  /** The plural resource name, as Kubernetes puts it in `details.kind` and in messages. */
  resource: string;
  /** The kind, used by `Invalid` (Kubernetes names the kind there, not the resource). */
  kind?: string;
  name?: string;
}

/**
 * An API failure, carried to the HTTP layer and rendered exactly as kube-apiserver renders
 * a `metav1.Status` (clients match on `reason` and `code`, kubectl prints `message`).
 */
export class ApiError extends Error {
  readonly code: string;

  constructor(
    readonly httpCode: number,
    readonly reason: string,
    message: string,
    readonly details?: JsonObject,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'ApiError';
    this.code = reason === '' ? 'APISERVER_FAILURE' : `APISERVER_${reason.toUpperCase()}`;
  }

  toStatus(): JsonObject {
    const status: JsonObject = {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: this.message,
    };
    // A webhook's refusal may name no reason; Kubernetes then leaves the field out.
    if (this.reason !== '') status['reason'] = this.reason;
    if (this.details !== undefined) status['details'] = this.details;
    status['code'] = this.httpCode;
    return status;
  }

  static notFound(ref: ResourceRef): ApiError {
    return new ApiError(404, 'NotFound', `${qualified(ref)} "${ref.name ?? ''}" not found`, details(ref));
  }

  static alreadyExists(ref: ResourceRef): ApiError {
    return new ApiError(409, 'AlreadyExists', `${qualified(ref)} "${ref.name ?? ''}" already exists`, details(ref));
  }

  static conflict(ref: ResourceRef, why: string): ApiError {
    const message = `Operation cannot be fulfilled on ${qualified(ref)} "${ref.name ?? ''}": ${why}`;
    return new ApiError(409, 'Conflict', message, details(ref));
  }

  static staleUpdate(ref: ResourceRef): ApiError {
    return ApiError.conflict(
      ref,
      'the object has been modified; please apply your changes to the latest version and try again',
    );
  }

  static invalid(ref: ResourceRef, causes: StatusCause[]): ApiError {
    const kind = ref.group === '' ? (ref.kind ?? ref.resource) : `${ref.kind ?? ref.resource}.${ref.group}`;
    const texts = causes.map((c) => (c.field === undefined ? c.message : `${c.field}: ${c.message}`));
    const joined = texts.length === 1 ? (texts[0] ?? '') : `[${texts.join(', ')}]`;
    const d: JsonObject = { name: ref.name ?? '', group: ref.group, kind: ref.kind ?? ref.resource };
    d['causes'] = causes.map((c) => ({ ...c }));
    return new ApiError(422, 'Invalid', `${kind} "${ref.name ?? ''}" is invalid: ${joined}`, d);
  }

  static badRequest(message: string): ApiError {
    return new ApiError(400, 'BadRequest', message);
  }

  static forbidden(ref: ResourceRef, why: string): ApiError {
    const message = `${qualified(ref)} "${ref.name ?? ''}" is forbidden: ${why}`;
    return new ApiError(403, 'Forbidden', message, details(ref));
  }

  static methodNotAllowed(): ApiError {
    return new ApiError(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource');
  }

  static unsupportedMediaType(contentType: string): ApiError {
    return new ApiError(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json; got ${contentType}`);
  }

  static expired(message: string): ApiError {
    return new ApiError(410, 'Expired', message);
  }

  static gone(message: string): ApiError {
    return new ApiError(410, 'Gone', message);
  }

  static resourceNotFound(path: string): ApiError {
    return new ApiError(404, 'NotFound', 'the server could not find the requested resource', {
      causes: [{ reason: 'UnexpectedServerResponse', message: `404 page not found: ${path}` }],
    });
  }

  static internal(cause: unknown): ApiError {
    const text = cause instanceof Error ? cause.message : String(cause);
    return new ApiError(500, 'InternalError', `Internal error occurred: ${text}`, undefined, { cause });
  }
}

function qualified(ref: ResourceRef): string {
  return ref.group === '' ? ref.resource : `${ref.resource}.${ref.group}`;
}

function details(ref: ResourceRef): JsonObject {
  const d: JsonObject = { name: ref.name ?? '', kind: ref.resource };
  if (ref.group !== '') d['group'] = ref.group;
  return d;
}
