import { status, type ServiceDefinition, type UntypedServiceImplementation } from '@grpc/grpc-js';

// grpc-js answers INTERNAL, with no detail, when a request body does not decode: a caller's
// bad bytes would look like a crash inside the server. Decoding of each single request (not of
// the messages of a client stream) is made lenient instead: a body that does not decode becomes
// a marker, and the server answers INVALID_ARGUMENT naming the method.

const MALFORMED = Symbol('malformed request');

interface MalformedRequest {
  readonly [MALFORMED]: string;
}

/** The service with each single-request method's decoder turned lenient (see above). */
export function lenientService<S extends ServiceDefinition>(service: S): S {
  const methods = Object.entries(service).map(([name, method]) => {
    if (method.requestStream) return [name, method];
    const decode = method.requestDeserialize;
    const requestDeserialize = (bytes: Buffer): unknown => {
      try {
        return decode(bytes);
      } catch (err) {
        const reason = `${method.path}: the request is not a valid protobuf message (${err instanceof Error ? err.message : String(err)})`;
        return { [MALFORMED]: reason } satisfies MalformedRequest;
      }
    };
    return [name, { ...method, requestDeserialize }];
  });
  return Object.fromEntries(methods) as S;
}

/** Why the request did not decode, or undefined for a decoded one. */
export function malformedReason(request: unknown): string | undefined {
  return typeof request === 'object' && request !== null && MALFORMED in request ? (request as MalformedRequest)[MALFORMED] : undefined;
}

/**
 * An implementation whose unary methods answer INVALID_ARGUMENT for a request the lenient
 * service could not decode, before the method's own code sees it. For servers whose methods
 * do not check `malformedReason` themselves.
 */
export function refuseMalformedUnary<I extends UntypedServiceImplementation>(service: ServiceDefinition, implementation: I): I {
  const wrapped: UntypedServiceImplementation = { ...implementation };
  for (const [name, method] of Object.entries(service)) {
    const handler = implementation[name];
    if (method.requestStream || method.responseStream || typeof handler !== 'function') continue;
    wrapped[name] = (call: { request: unknown }, callback: (err: { code: status; details: string }) => void) => {
      const malformed = malformedReason(call.request);
      if (malformed !== undefined) {
        callback({ code: status.INVALID_ARGUMENT, details: malformed });
        return;
      }
      (handler as (c: unknown, cb: unknown) => void)(call, callback);
    };
  }
  return wrapped as I;
}
