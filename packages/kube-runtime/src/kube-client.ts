// A thin client for the Kubernetes REST API: JSON requests and watches over node:http(s) with one
// keep-alive agent. It knows paths, not resources — callers name the endpoint — which keeps a
// process that talks to a handful of endpoints free of a generated model for every kind.

import { readFile } from 'node:fs/promises';
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { Duplex } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { BearerToken } from './bearer-token.js';
import { HttpExchange } from './http-exchange.js';
import { jsonLines } from './json-lines.js';
import { KubeApiError } from './kube-api-error.js';
import { isKubeClientError, KubeClientError } from './kube-client-error.js';
import type { KubeConfig, PemSource } from './kube-config.js';

export type KubeQuery = Readonly<Record<string, string | number | boolean | undefined>>;
export type KubeMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export const MERGE_PATCH = 'application/merge-patch+json';
export const JSON_PATCH = 'application/json-patch+json';
export const STRATEGIC_MERGE_PATCH = 'application/strategic-merge-patch+json';

export interface KubeRequest {
  readonly method?: KubeMethod;
  /** From the server root: `/api/v1/nodes/n1`. */
  readonly path: string;
  readonly query?: KubeQuery;
  /** Sent as JSON (a string is sent as is). */
  readonly body?: unknown;
  /** Default application/json; a patch names its kind (MERGE_PATCH …). */
  readonly contentType?: string;
  readonly signal?: AbortSignal;
  /** Bound on the whole exchange; default the client's. */
  readonly timeoutMs?: number;
}

export interface KubeWatchRequest {
  readonly path: string;
  readonly query?: KubeQuery;
  readonly signal?: AbortSignal;
  /** No bytes for this long ends the watch as a dropped connection does; default: no bound. */
  readonly idleTimeoutMs?: number;
}

export type KubeWatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK';

export interface KubeWatchEvent<T> {
  readonly type: KubeWatchEventType;
  readonly object: T;
}

export interface KubeUpgradeRequest {
  readonly path: string;
  readonly query?: KubeQuery;
  /** The upgrade's own headers (Upgrade, Sec-WebSocket-*); Connection: Upgrade is added. */
  readonly headers: Readonly<Record<string, string>>;
  /** Bound on the wait for the server's answer to the upgrade. */
  readonly signal?: AbortSignal;
}

/** The server switched protocols (the caller owns `socket`), or refused with a status and its body. */
export type KubeUpgrade =
  | { readonly upgraded: true; readonly socket: Duplex; readonly head: Buffer; readonly headers: IncomingMessage['headers'] }
  | { readonly upgraded: false; readonly status: number; readonly body: string };

export interface KubeClientOptions {
  /** Bound on a request, and on a watch's wait for its response headers. */
  readonly timeoutMs?: number;
  readonly tokenRefreshMs?: number;
  readonly now?: () => number;
  readonly userAgent?: string;
  /** How often a throttled request (429, or 5xx with Retry-After) is sent again; client-go's 10. */
  readonly maxThrottleRetries?: number;
}

// kube-apiserver's own request timeout is 60 s; a client bound below it still sees the server's
// Status for slow requests, and a stuck connection is given up on in bounded time.
const DEFAULT_TIMEOUT_MS = 30_000;
// Idle kept-alive sockets are closed after this; Node lowers it to a server's Keep-Alive hint.
const FREE_SOCKET_TIMEOUT_MS = 30_000;
const DEFAULT_THROTTLE_RETRIES = 10;
// A Retry-After beyond this is taken as this: a minute is the API server's own request bound.
const MAX_RETRY_AFTER_S = 60;
// What client-go waits when a 429 names no delay.
const DEFAULT_RETRY_AFTER_S = 1;
const WATCH_TYPES: ReadonlySet<string> = new Set(['ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK']);

export class KubeClient {
  readonly server: string;
  readonly #agent: HttpAgent;
  readonly #token: BearerToken;
  readonly #timeoutMs: number;
  readonly #userAgent: string;
  readonly #throttleRetries: number;
  readonly #live = new Set<HttpExchange>();
  #closed = false;

  private constructor(server: string, agent: HttpAgent, token: BearerToken, options: KubeClientOptions) {
    this.server = server;
    this.#agent = agent;
    this.#token = token;
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.#userAgent = options.userAgent ?? 'podvirt';
    this.#throttleRetries = options.maxThrottleRetries ?? DEFAULT_THROTTLE_RETRIES;
  }

  /** Reads the certificate files `config` names and opens nothing yet. */
  static async create(config: KubeConfig, options: KubeClientOptions = {}): Promise<KubeClient> {
    const [ca, cert, key] = await Promise.all([pem(config.certificateAuthority), pem(config.clientCertificate), pem(config.clientKey)]);
    const agent = new URL(config.server).protocol === 'https:'
      ? new HttpsAgent({
        keepAlive: true,
        timeout: FREE_SOCKET_TIMEOUT_MS,
        rejectUnauthorized: !config.insecureSkipTlsVerify,
        ...(ca === undefined ? {} : { ca }),
        ...(cert === undefined || key === undefined ? {} : { cert, key }),
        ...(config.tlsServerName === undefined ? {} : { servername: config.tlsServerName }),
      })
      : new HttpAgent({ keepAlive: true, timeout: FREE_SOCKET_TIMEOUT_MS });
    const token = new BearerToken({
      ...(config.token === undefined ? {} : { token: config.token }),
      ...(config.tokenFile === undefined ? {} : { tokenFile: config.tokenFile }),
      ...(config.exec === undefined ? {} : { exec: config.exec }),
      ...(options.tokenRefreshMs === undefined ? {} : { refreshMs: options.tokenRefreshMs }),
      ...(options.now === undefined ? {} : { now: options.now }),
    });
    return new KubeClient(config.server, agent, token, options);
  }

  /**
   * The decoded JSON answer (undefined for an empty body); a refusal rejects with KubeApiError.
   * A throttled request (429 Too Many Requests, or a 5xx with Retry-After on a request other
   * than POST) is sent again after the server's Retry-After, as client-go does, up to
   * `maxThrottleRetries` times; then the 429 is the caller's (KUBE_ERR_TOO_MANY_REQUESTS).
   */
  async request<T = unknown>(r: KubeRequest): Promise<T> {
    const method = r.method ?? 'GET';
    const what = `${method} ${r.path}`;
    const body = r.body === undefined ? undefined : Buffer.from(typeof r.body === 'string' ? r.body : JSON.stringify(r.body));
    let throttled = 0;
    for (let attempt = 1; ; attempt++) {
      const ex = await this.#start(method, r.path, r.query, body, r.contentType, r.signal, r.timeoutMs ?? this.#timeoutMs, what);
      try {
        let res: IncomingMessage;
        try {
          res = await ex.response;
        } catch (err) {
          // POST is not idempotent: the server may have acted on it before the reset.
          if (ex.retryable && attempt === 1 && method !== 'POST') continue;
          throw err;
        }
        const text = await ex.text(res);
        const wait = throttled < this.#throttleRetries ? retryAfterSeconds(res, method) : undefined;
        if (wait === undefined) return this.#decode<T>(res, text, what);
        throttled++;
        this.#forget(ex);
        await this.#pause(wait * 1000, r.signal, what);
      } finally {
        this.#forget(ex);
      }
    }
  }

  async #pause(ms: number, signal: AbortSignal | undefined, what: string): Promise<void> {
    try {
      await sleep(ms, undefined, signal === undefined ? {} : { signal });
    } catch (err) {
      throw new KubeClientError('KUBE_ERR_ABORTED', `${what}: aborted`, { cause: err });
    }
  }

  /**
   * Watch events until the server ends the stream or the connection drops (the iterable ends:
   * re-watch from the last resourceVersion). An ERROR event throws its Status as KubeApiError
   * (410 Expired/Gone: relist); an abort throws KUBE_ERR_ABORTED. Leaving the loop early
   * closes the connection.
   */
  async *watch<T = unknown>(r: KubeWatchRequest): AsyncGenerator<KubeWatchEvent<T>, void, undefined> {
    const what = `watch ${r.path}`;
    const ex = await this.#start('GET', r.path, { ...r.query, watch: true }, undefined, undefined, r.signal, this.#timeoutMs, what);
    let ended = false;
    try {
      const res = await ex.response;
      if ((res.statusCode ?? 0) < 200 || (res.statusCode ?? 0) >= 300) this.#decode(res, await ex.text(res), what);
      const idle = r.idleTimeoutMs;
      ex.rearm(idle, 'no watch data');
      const chunks = idle === undefined ? (res as AsyncIterable<Buffer>) : rearmEach(res, () => ex.rearm(idle, 'no watch data'));
      try {
        for await (const value of jsonLines(chunks)) yield watchEvent<T>(value, what);
        ended = true;
      } catch (err) {
        if (ex.failure !== undefined && ex.failure.code !== 'KUBE_ERR_TIMEOUT') throw ex.failure;
        if (err instanceof KubeApiError || isKubeClientError(err, 'KUBE_ERR_BAD_RESPONSE')) throw err;
        // Reset, or silent past the idle bound: this stream is over either way.
      }
    } finally {
      // A no-op after a clean end (the socket is back in the pool); otherwise the socket goes.
      if (!ended) ex.destroy(new KubeClientError('KUBE_ERR_ABORTED', `${what}: abandoned by the caller`));
      this.#forget(ex);
    }
  }

  /**
   * An upgraded connection to `path` (a websocket's handshake) with this client's credentials, on a
   * connection of its own (not the keep-alive pool's). A failure to connect rejects with
   * KubeClientError KUBE_ERR_CONNECTION; an abort with KUBE_ERR_ABORTED.
   */
  async upgrade(r: KubeUpgradeRequest): Promise<KubeUpgrade> {
    const token = await this.#token.value();
    const url = this.#url(r.path, r.query);
    const headers: OutgoingHttpHeaders = { ...r.headers, Connection: 'Upgrade', 'User-Agent': this.#userAgent };
    if (token !== undefined) headers['Authorization'] = `Bearer ${token}`;
    // The pool's TLS settings only (an Agent's options also carry `path: null`, which would replace the URL's).
    const { ca, cert, key, rejectUnauthorized, servername } = this.#agent instanceof HttpsAgent ? this.#agent.options : {};
    const tls = { ca, cert, key, rejectUnauthorized, ...(servername === undefined ? {} : { servername }) };
    const what = `upgrade ${r.path}`;
    return new Promise<KubeUpgrade>((resolve, reject) => {
      const options = { ...tls, method: 'GET', headers, agent: false as const, ...(r.signal === undefined ? {} : { signal: r.signal }) };
      const req = url.protocol === 'https:' ? httpsRequest(url, options) : httpRequest(url, options);
      req.on('upgrade', (res, socket, head) => resolve({ upgraded: true, socket, head, headers: res.headers }));
      req.on('response', (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ upgraded: false, status: res.statusCode ?? 0, body }));
        res.on('error', (err) => reject(new KubeClientError('KUBE_ERR_CONNECTION', `${what}: ${err.message}`, { cause: err })));
      });
      req.on('error', (err) => reject(new KubeClientError(r.signal?.aborted === true ? 'KUBE_ERR_ABORTED' : 'KUBE_ERR_CONNECTION', `${what}: ${err.message}`, { cause: err })));
      req.end();
    });
  }

  /** Cuts every request and watch in flight (KUBE_ERR_CLOSED) and closes every socket. Idempotent. */
  close(): Promise<void> {
    if (!this.#closed) {
      this.#closed = true;
      for (const ex of this.#live) ex.destroy(new KubeClientError('KUBE_ERR_CLOSED', 'the Kubernetes client was closed'));
      this.#live.clear();
      this.#agent.destroy();
    }
    return Promise.resolve();
  }

  async #start(
    method: KubeMethod, path: string, query: KubeQuery | undefined, body: Buffer | undefined, contentType: string | undefined,
    signal: AbortSignal | undefined, timeoutMs: number, what: string,
  ): Promise<HttpExchange> {
    const token = await this.#token.value();
    if (this.#closed) throw new KubeClientError('KUBE_ERR_CLOSED', `${what}: the Kubernetes client was closed`);
    const headers: OutgoingHttpHeaders = { Accept: 'application/json', 'User-Agent': this.#userAgent };
    if (token !== undefined) headers['Authorization'] = `Bearer ${token}`;
    if (body !== undefined) {
      headers['Content-Type'] = contentType ?? 'application/json';
      headers['Content-Length'] = body.length;
    }
    const ex = new HttpExchange({ url: this.#url(path, query), method, headers, body, agent: this.#agent, signal, timeoutMs, what });
    this.#live.add(ex);
    return ex;
  }

  #forget(ex: HttpExchange): void {
    ex.finish();
    this.#live.delete(ex);
  }

  #url(path: string, query: KubeQuery | undefined): URL {
    if (!path.startsWith('/')) throw new KubeClientError('KUBE_ERR_CONFIG', `request path "${path}" must start with /`);
    const url = new URL(this.server + path);
    for (const [key, value] of Object.entries(query ?? {})) if (value !== undefined) url.searchParams.set(key, String(value));
    return url;
  }

  #decode<T>(res: IncomingMessage, text: string, what: string): T {
    const status = res.statusCode ?? 0;
    let json: unknown;
    let parsed = true;
    try {
      json = text.trim() === '' ? undefined : JSON.parse(text);
    } catch {
      parsed = false;
    }
    if (status < 200 || status >= 300) {
      if (status === 401) this.#token.invalidate();
      throw KubeApiError.from(status, parsed ? json : text, what);
    }
    if (!parsed) throw new KubeClientError('KUBE_ERR_BAD_RESPONSE', `${what}: the response is not JSON: ${text.slice(0, 120)}`);
    return json as T;
  }
}

/** Seconds to wait before sending a throttled request again, or undefined when it is not throttled. */
function retryAfterSeconds(res: IncomingMessage, method: KubeMethod): number | undefined {
  const status = res.statusCode ?? 0;
  const header = res.headers['retry-after'];
  const stated = header === undefined ? undefined : Number(header);
  const seconds = stated === undefined || !Number.isFinite(stated) || stated < 0 ? undefined : Math.min(stated, MAX_RETRY_AFTER_S);
  if (status === 429) return seconds ?? DEFAULT_RETRY_AFTER_S;
  // A 5xx may come from a server that did act on a POST; other verbs are safe to repeat.
  if (status >= 500 && seconds !== undefined && method !== 'POST') return seconds;
  return undefined;
}

function watchEvent<T>(value: unknown, what: string): KubeWatchEvent<T> {
  const { type, object } = (typeof value === 'object' && value !== null ? value : {}) as { type?: unknown; object?: unknown };
  if (type === 'ERROR') {
    const code = (object as { code?: unknown } | undefined)?.code;
    throw KubeApiError.from(typeof code === 'number' ? code : 500, object, what);
  }
  if (typeof type !== 'string' || !WATCH_TYPES.has(type) || typeof object !== 'object' || object === null) {
    throw new KubeClientError('KUBE_ERR_BAD_RESPONSE', `${what}: not a watch event: ${JSON.stringify(value).slice(0, 120)}`);
  }
  return { type: type as KubeWatchEventType, object: object as T };
}

async function* rearmEach(chunks: AsyncIterable<Buffer>, onChunk: () => void): AsyncGenerator<Buffer, void, undefined> {
  for await (const chunk of chunks) {
    onChunk();
    yield chunk;
  }
}

async function pem(source: PemSource | undefined): Promise<Buffer | undefined> {
  if (source === undefined) return undefined;
  if ('pem' in source) return source.pem;
  try {
    return await readFile(source.path);
  } catch (err) {
    throw new KubeClientError('KUBE_ERR_CONFIG', `cannot read ${source.path}: ${(err as Error).message}`, { cause: err });
  }
}
