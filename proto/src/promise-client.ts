// The one way podvirt calls a unary gRPC method: typed promise methods derived from a
// generated service definition. grpc-js knows neither promises nor AbortSignal, so every call
// gets its deadline here, an aborting signal becomes call.cancel() here, and a failed status
// becomes the caller's error type here (through `toError`, one mapping table per caller).
//
// The methods are typed from the definition's own serializers, so a wrong request or response
// type does not compile, and nothing casts a generated client method.

import { Metadata, status, type Client, type ServiceError } from '@grpc/grpc-js';

/** The shape of one unary method in a ts-proto `...Service` definition. */
interface UnaryDefinition<Req, Res> {
  readonly path: string;
  readonly requestStream: false;
  readonly responseStream: false;
  readonly requestSerialize: (value: Req) => Buffer;
  readonly responseDeserialize: (value: Buffer) => Res;
}

export interface UnaryCallOptions {
  /** Overrides the client's default deadline, relative to now. */
  readonly timeoutMs?: number;
  /** Aborting cancels the call; the caller sees its CANCELLED error. */
  readonly signal?: AbortSignal | undefined;
  readonly metadata?: Metadata;
}

export type UnaryMethod<Req, Res> = (request: Req, options?: UnaryCallOptions) => Promise<Res>;

/** Every unary method of a service definition, as a promise method of the same name. */
export type PromiseMethods<S> = {
  readonly [K in keyof S as S[K] extends { readonly requestStream: false; readonly responseStream: false } ? K : never]: S[K] extends {
    readonly requestSerialize: (value: infer Req) => Buffer;
    readonly responseDeserialize: (value: Buffer) => infer Res;
  }
    ? UnaryMethod<Req, Res>
    : never;
};

/** Told each call's method name (as in the path, e.g. `Sync`), status name and duration. */
export type CallObserver = (method: string, code: string, seconds: number) => void;

export interface PromiseClientOptions<E extends Error = ServiceError, M extends string = string> {
  /**
   * Deadline of a call that names none: one for every method, or one per method (by its key in
   * the service definition, e.g. `sync`; `cmdDeadlineMs` is the Cmd contract's).
   */
  readonly timeoutMs: number | ((method: M) => number);
  /** The caller's one mapping from a failed status to its error; the ServiceError itself when unset. */
  readonly toError?: (err: ServiceError, method: string) => E;
  readonly observe?: CallObserver;
}

function isUnary(value: unknown): value is UnaryDefinition<unknown, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const def = value as Partial<UnaryDefinition<unknown, unknown>>;
  return def.requestStream === false && def.responseStream === false && typeof def.path === 'string';
}

/** The status a call aborted before it started would have had, so callers see one error shape. */
function cancelledBeforeStart(reason: unknown): ServiceError {
  const err = new Error('cancelled before the call started', { cause: reason }) as ServiceError;
  return Object.assign(err, { code: status.CANCELLED, details: 'cancelled before the call started', metadata: new Metadata() });
}

function unaryMethod<Req, Res, E extends Error, M extends string>(
  client: Client,
  key: M,
  def: UnaryDefinition<Req, Res>,
  options: PromiseClientOptions<E, M>,
): UnaryMethod<Req, Res> {
  const name = def.path.slice(def.path.lastIndexOf('/') + 1);
  const { timeoutMs } = options;
  const defaultMs = typeof timeoutMs === 'number' ? timeoutMs : timeoutMs(key);
  const fail = (err: ServiceError): Error => options.toError?.(err, name) ?? err;
  return (request, call = {}) => {
    const { signal } = call;
    if (signal?.aborted === true) return Promise.reject(fail(cancelledBeforeStart(signal.reason)));
    return new Promise<Res>((resolve, reject) => {
      const started = performance.now();
      const deadline = Date.now() + (call.timeoutMs ?? defaultMs);
      const onAbort = (): void => pending.cancel();
      const pending = client.makeUnaryRequest(def.path, def.requestSerialize, def.responseDeserialize, request, call.metadata ?? new Metadata(), { deadline }, (err, res) => {
        signal?.removeEventListener('abort', onAbort);
        options.observe?.(name, err ? (status[err.code] ?? 'UNKNOWN') : 'OK', (performance.now() - started) / 1000);
        if (err) reject(fail(err));
        else if (res === undefined) reject(fail(Object.assign(new Error('empty response'), { code: status.INTERNAL, details: 'empty response', metadata: new Metadata() })));
        else resolve(res);
      });
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  };
}

/**
 * Promise methods for every unary method of `service`, calling through `client` (a generated
 * client or any grpc-js Client on the right channel). Streaming methods stay on the client.
 */
export function promiseClient<S extends object, E extends Error = ServiceError>(
  service: S,
  client: Client,
  options: PromiseClientOptions<E, keyof PromiseMethods<S> & string>,
): PromiseMethods<S> {
  type Key = keyof PromiseMethods<S> & string;
  const methods: Record<string, UnaryMethod<unknown, unknown>> = {};
  for (const [key, def] of Object.entries(service)) {
    // A unary method's key is a key of PromiseMethods<S> by that type's definition.
    if (isUnary(def)) methods[key] = unaryMethod(client, key as Key, def, options);
  }
  // Built key by key from the same definition the type is derived from.
  return methods as PromiseMethods<S>;
}
