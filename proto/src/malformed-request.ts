import type { ServiceDefinition } from '@grpc/grpc-js';

// grpc-js answers INTERNAL, with no detail, when a request body does not decode: a caller's
// bad bytes would look like a crash inside the server. Decoding of each single request (not of
// the messages of a client stream) is made lenient instead: a body that does not decode becomes
// a marker, and the server answers INVALID_ARGUMENT naming the method (unaryHandler does, and
// a streaming method checks `malformedReason` itself).

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
