// A small HTTP server for a component's plain endpoints (/metrics, /healthz, /readyz) — the
// handler's and the controller's: GET and HEAD only, a route table, and a bounded close(). The
// caller picks the address; these endpoints carry no authentication.

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface EndpointResponse {
  readonly status: number;
  readonly contentType: string;
  readonly body: string;
}

export type EndpointRoute = () => EndpointResponse | Promise<EndpointResponse>;

export interface HttpEndpointsOptions {
  readonly host: string;
  /** 0 picks a free port (tests). */
  readonly port: number;
  readonly routes: Readonly<Record<string, EndpointRoute>>;
  readonly closeTimeoutMs?: number;
}

/** The address cannot be listened on (in use, not local, not permitted). */
export class HttpEndpointsError extends Error {
  readonly code: 'KUBE_ERR_LISTEN';

  constructor(code: 'KUBE_ERR_LISTEN', message: string, options?: { cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'HttpEndpointsError';
    this.code = code;
  }
}

/** What /metrics serves: a prom-client Registry, or anything that renders one. */
export interface MetricsSource {
  readonly contentType: string;
  metrics(): Promise<string>;
}

/** The /metrics route of a registry: rendered at each scrape. */
export function metricsRoute(source: MetricsSource): EndpointRoute {
  return async () => ({ status: 200, contentType: source.contentType, body: await source.metrics() });
}

const text = (status: number, body: string): EndpointResponse => ({ status, contentType: 'text/plain', body });

/**
 * The probe routes of a component: /healthz says the process serves requests (a liveness probe
 * must not fail on a slow API server, or the kubelet would restart a process that is merely
 * waiting); /readyz says it does its job, and names what is missing (`missing()`) when it does not.
 */
export function probeRoutes(missing: () => readonly string[]): Record<string, EndpointRoute> {
  return {
    '/healthz': () => text(200, 'ok\n'),
    '/readyz': () => {
      const failing = missing();
      return failing.length === 0 ? text(200, 'ok\n') : text(503, `not ready: ${failing.join(', ')}\n`);
    },
  };
}

export class HttpEndpoints {
  readonly #server: Server;
  readonly #o: HttpEndpointsOptions;
  #closing: Promise<void> | undefined;

  private constructor(server: Server, options: HttpEndpointsOptions) {
    this.#server = server;
    this.#o = options;
  }

  static async listen(options: HttpEndpointsOptions): Promise<HttpEndpoints> {
    const server = createServer((req, res) => void serve(options.routes, req, res));
    // Scrapes and probes are short; an idle keep-alive socket must not hold close() open.
    server.keepAliveTimeout = 5_000;
    await new Promise<void>((resolve, reject) => {
      server.once('error', (err) => reject(new HttpEndpointsError('KUBE_ERR_LISTEN', `cannot listen on ${options.host}:${options.port}: ${err.message}`, { cause: err })));
      server.listen(options.port, options.host, () => resolve());
    });
    return new HttpEndpoints(server, options);
  }

  get port(): number {
    return (this.#server.address() as AddressInfo).port;
  }

  /** Stops accepting, closes idle connections, and forces the rest after the bound. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= new Promise<void>((resolve) => {
      const force = setTimeout(() => this.#server.closeAllConnections(), this.#o.closeTimeoutMs ?? 2_000);
      this.#server.close(() => {
        clearTimeout(force);
        resolve();
      });
      this.#server.closeIdleConnections();
    });
    return this.#closing;
  }
}

async function serve(routes: Readonly<Record<string, EndpointRoute>>, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = new URL(req.url ?? '/', 'http://localhost').pathname;
  const route = Object.hasOwn(routes, path) ? routes[path] : undefined;
  let out: EndpointResponse;
  if (req.method !== 'GET' && req.method !== 'HEAD') out = { status: 405, contentType: 'text/plain', body: 'method not allowed\n' };
  else if (route === undefined) out = { status: 404, contentType: 'text/plain', body: 'not found\n' };
  else {
    try {
      out = await route();
    } catch (err) {
      out = { status: 500, contentType: 'text/plain', body: `${err instanceof Error ? err.message : String(err)}\n` };
    }
  }
  res.writeHead(out.status, { 'content-type': out.contentType, 'content-length': Buffer.byteLength(out.body) });
  res.end(req.method === 'HEAD' ? undefined : out.body);
}
