// The aggregation layer, as kube-apiserver's aggregator runs it. An APIService with a `service`
// takes the paths of its group and version (`/apis/GROUP/VERSION/…`) from this server: the caller
// is authenticated first (the testbed's way: the bearer token, or the user it impersonates, is the
// user; no token is the administrator, in system:masters) and authorised by RBAC (kube-apiserver
// authorises a proxied request as any other, before the aggregated server sees it); then the
// request goes to an endpoint of the Service over TLS verified against the APIService's caBundle
// (as `SERVICE.NAMESPACE.svc`), with the front-proxy client certificate and the user in
// X-Remote-User, X-Remote-Group and X-Remote-Extra-*, whatever the caller sent in those headers
// dropped. A websocket upgrade is passed through the same way. An APIService without an endpoint,
// or whose endpoint cannot be reached or fails TLS, answers 503. The requestheader configuration
// is published as kube-apiserver publishes it, in kube-system/extension-apiserver-authentication.
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { request, type RequestOptions } from 'node:https';
import type { Duplex } from 'node:stream';
import { userInfo } from './admission/attributes.js';
import { rbacAllows } from './admission/rbac-authorizer.js';
import { ApiError } from './errors.js';
import { arr, obj, str, type JsonObject } from './json.js';
import type { ObjectService } from './object-service.js';
import { callerOf, verbOf } from './request-record.js';

export interface AggregationOptions {
  /** PEM: the requestheader CA (kube-apiserver's --requestheader-client-ca-file). */
  readonly requestHeaderCa: string;
  /** PEM: the client certificate shown to aggregated servers (--proxy-client-cert-file/-key-file). */
  readonly proxyClient: { readonly cert: string; readonly key: string };
  /** --requestheader-allowed-names: the proxy client certificate's CN. */
  readonly allowedNames: readonly string[];
}

/** The user the aggregated server is told about. */
export interface ProxiedUser {
  readonly username: string;
  readonly groups: readonly string[];
}

export const AUTHENTICATION_CONFIG_MAP = { namespace: 'kube-system', name: 'extension-apiserver-authentication' } as const;
const USER_HEADER = 'X-Remote-User';
const GROUP_HEADER = 'X-Remote-Group';
const EXTRA_PREFIX = 'X-Remote-Extra-';
/** The testbed's administrator (the caller without a token), as the aggregated server sees it. */
export const TESTBED_ADMIN: ProxiedUser = { username: 'testbed-admin', groups: ['system:masters', 'system:authenticated'] };
/** Headers never forwarded: the caller's credentials (used up here) and any claim of an identity. */
const DROPPED = /^(authorization|impersonate-.*|x-remote-.*|host|connection|upgrade|keep-alive|proxy-connection|transfer-encoding)$/i;

/** The user of a request, as this server authenticates one. */
export function proxiedUser(req: IncomingMessage): ProxiedUser {
  const caller = callerOf(req);
  return caller === '' ? TESTBED_ADMIN : userInfo(caller);
}

interface Target {
  readonly group: string;
  readonly version: string;
  readonly apiService: JsonObject;
  /** The path's parts after /apis/GROUP/VERSION. */
  readonly rest: readonly string[];
}

interface Endpoint {
  readonly host: string;
  readonly port: number;
  readonly servername: string;
  readonly ca: string | undefined;
  readonly insecure: boolean;
}

export class Aggregator {
  #options: AggregationOptions | undefined;
  readonly #upgraded = new Set<Duplex>();

  constructor(private readonly service: ObjectService) {}

  /** Turns the layer on: publishes the requestheader configuration; APIServices are proxied from now on. */
  enable(options: AggregationOptions): void {
    this.#options = options;
    const cmType = this.service.registry.find('', 'v1', 'configmaps');
    if (cmType === undefined) throw new Error('the registry has no configmaps');
    const data = {
      'client-ca-file': options.requestHeaderCa,
      'requestheader-client-ca-file': options.requestHeaderCa,
      'requestheader-allowed-names': JSON.stringify(options.allowedNames),
      'requestheader-username-headers': JSON.stringify([USER_HEADER]),
      'requestheader-group-headers': JSON.stringify([GROUP_HEADER]),
      'requestheader-extra-headers-prefix': JSON.stringify([EXTRA_PREFIX]),
    };
    const { namespace, name } = AUTHENTICATION_CONFIG_MAP;
    const existing = this.service.store.get(cmType.storageKey, namespace, name);
    if (existing === undefined) this.service.create(cmType, namespace, { metadata: { name, namespace }, data });
    else this.service.update(cmType, namespace, name, { ...existing, data }, undefined);
  }

  /** The APIServices with a Service: group and version (discovery lists them beside the local groups). */
  groupVersions(): Array<{ group: string; version: string }> {
    if (this.#options === undefined) return [];
    return this.service.store.list('apiservices', undefined).flatMap((a) => {
      const spec = obj(a['spec']) ?? {};
      const group = str(spec['group']);
      const version = str(spec['version']);
      return obj(spec['service']) === undefined || group === undefined || version === undefined ? [] : [{ group, version }];
    });
  }

  /** Whether the request's path belongs to an aggregated API (the caller then hands it to `proxy` or `upgrade`). */
  serves(req: IncomingMessage): boolean {
    return this.#target(req) !== undefined;
  }

  async proxy(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const target = this.#target(req);
    if (target === undefined) throw new Error('proxy: not an aggregated path');
    try {
      const endpoint = this.#admit(req, target);
      const upstream = request(this.#requestOptions(req, endpoint, proxiedUser(req)), (answer) => {
        res.writeHead(answer.statusCode ?? 502, withoutHopHeaders(answer.headers));
        answer.pipe(res);
      });
      upstream.on('error', (err) => {
        if (res.headersSent) res.destroy();
        else sendStatus(res, unreachable(err));
      });
      res.on('close', () => upstream.destroy());
      req.pipe(upstream);
    } catch (err) {
      sendStatus(res, err instanceof ApiError ? err : ApiError.internal(err));
    }
  }

  /** A websocket (any upgrade) to an aggregated path; any other upgrade is refused (this server serves none). */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on('error', () => socket.destroy());
    const target = this.#target(req);
    if (target === undefined) {
      writeRaw(socket, ApiError.resourceNotFound(new URL(req.url ?? '/', 'http://apiserver').pathname));
      return;
    }
    let endpoint: Endpoint;
    try {
      endpoint = this.#admit(req, target);
    } catch (err) {
      writeRaw(socket, err instanceof ApiError ? err : ApiError.internal(err));
      return;
    }
    const options = this.#requestOptions(req, endpoint, proxiedUser(req));
    const upstream = request({ ...options, headers: { ...options.headers, connection: 'Upgrade', upgrade: req.headers.upgrade ?? 'websocket' } });
    upstream.on('upgrade', (answer, backend, backendHead) => {
      const lines = [`HTTP/1.1 101 ${answer.statusMessage ?? 'Switching Protocols'}`];
      for (let i = 0; i + 1 < answer.rawHeaders.length; i += 2) lines.push(`${answer.rawHeaders[i] ?? ''}: ${answer.rawHeaders[i + 1] ?? ''}`);
      socket.write(`${lines.join('\r\n')}\r\n\r\n`);
      if (backendHead.length > 0) socket.write(backendHead);
      if (head.length > 0) backend.write(head);
      this.#splice(socket, backend);
    });
    upstream.on('response', (answer) => {
      // A refusal (403, 409 …) as the backend gave it, then the connection ends.
      const chunks: Buffer[] = [];
      answer.on('data', (c: Buffer) => chunks.push(c));
      answer.on('end', () => {
        const body = Buffer.concat(chunks);
        const type = answer.headers['content-type'] ?? 'text/plain';
        socket.end(Buffer.concat([Buffer.from(`HTTP/1.1 ${answer.statusCode ?? 502} ${answer.statusMessage ?? ''}\r\ncontent-type: ${type}\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n`), body]));
      });
      answer.on('error', () => socket.destroy());
    });
    upstream.on('error', (err) => writeRaw(socket, unreachable(err)));
    socket.on('close', () => upstream.destroy());
    upstream.end();
  }

  /** Ends every websocket passed through (the server is closing). */
  close(): void {
    for (const s of [...this.#upgraded]) s.destroy();
  }

  #splice(client: Duplex, backend: Duplex): void {
    this.#upgraded.add(client);
    this.#upgraded.add(backend);
    const end = (): void => {
      client.destroy();
      backend.destroy();
      this.#upgraded.delete(client);
      this.#upgraded.delete(backend);
    };
    client.on('close', end);
    backend.on('close', end);
    backend.on('error', end);
    client.pipe(backend);
    backend.pipe(client);
  }

  #target(req: IncomingMessage): Target | undefined {
    if (this.#options === undefined) return undefined;
    const parts = new URL(req.url ?? '/', 'http://apiserver').pathname.split('/').filter((p) => p !== '').map((p) => decodeURIComponent(p));
    if (parts[0] !== 'apis' || parts.length < 3) return undefined;
    const group = parts[1] ?? '';
    const version = parts[2] ?? '';
    const apiService = this.service.store.get('apiservices', '', `${version}.${group}`);
    if (apiService === undefined || obj(obj(apiService['spec'])?.['service']) === undefined) return undefined;
    return { group, version, apiService, rest: parts.slice(3) };
  }

  /** Authorises the caller for the path (RBAC, as kube-apiserver does before proxying) and finds the endpoint. */
  #admit(req: IncomingMessage, target: Target): Endpoint {
    const user = proxiedUser(req);
    const resource = resourceOf(target.rest);
    if (resource !== undefined) {
      const url = new URL(req.url ?? '/', 'http://apiserver');
      const watching = url.searchParams.get('watch') === 'true' || url.searchParams.get('watch') === '1';
      const verb = verbOf(req.method ?? 'GET', resource.name !== '', watching);
      const check = { verb, group: target.group, resource: resource.resource, subresource: resource.subresource, namespace: resource.namespace, name: resource.name };
      if (!rbacAllows(this.service.store, { token: user.username, username: user.username, groups: user.groups }, check)) {
        const what = resource.subresource === '' ? resource.resource : `${resource.resource}/${resource.subresource}`;
        const where = resource.namespace === '' ? `in API group "${target.group}" at the cluster scope` : `in API group "${target.group}" in the namespace "${resource.namespace}"`;
        throw ApiError.forbidden({ group: target.group, resource: resource.resource, name: resource.name }, `User "${user.username}" cannot ${verb} resource "${what}" ${where}`);
      }
    }
    return this.#endpoint(target.apiService);
  }

  #endpoint(apiService: JsonObject): Endpoint {
    const spec = obj(apiService['spec']) ?? {};
    const ref = obj(spec['service']) ?? {};
    const namespace = str(ref['namespace']) ?? '';
    const name = str(ref['name']) ?? '';
    const port = typeof ref['port'] === 'number' ? ref['port'] : 443;
    const unavailable = (why: string): ApiError => new ApiError(503, 'ServiceUnavailable', `service unavailable: ${why}`);
    const svc = this.service.store.get('services', namespace, name);
    if (svc === undefined) throw unavailable(`service/${name} in "${namespace}" is not present`);
    const servicePort = arr(obj(svc['spec'])?.['ports']).map((p) => obj(p) ?? {}).find((p) => p['port'] === port);
    if (servicePort === undefined) throw unavailable(`service/${name} in "${namespace}" has no port ${port}`);
    const portName = str(servicePort['name']) ?? '';
    const endpoints = this.service.store.get('endpoints', namespace, name);
    for (const subset of arr(endpoints?.['subsets']).map((s) => obj(s) ?? {})) {
      const ip = str(obj(arr(subset['addresses'])[0])?.['ip']);
      const epPort = arr(subset['ports']).map((p) => obj(p) ?? {}).find((p) => (str(p['name']) ?? '') === portName);
      if (ip !== undefined && typeof epPort?.['port'] === 'number') {
        const caBundle = str(spec['caBundle']);
        return {
          host: ip, port: epPort['port'], servername: `${name}.${namespace}.svc`,
          ca: caBundle === undefined || caBundle === '' ? undefined : Buffer.from(caBundle, 'base64').toString('utf8'),
          insecure: spec['insecureSkipTLSVerify'] === true,
        };
      }
    }
    throw unavailable(`no endpoints for service/${name} in "${namespace}"`);
  }

  #requestOptions(req: IncomingMessage, endpoint: Endpoint, user: ProxiedUser): RequestOptions {
    const options = this.#options;
    if (options === undefined) throw new Error('aggregation is not enabled');
    const headers: Record<string, string | string[]> = {};
    for (const [key, value] of Object.entries(req.headers)) if (value !== undefined && !DROPPED.test(key)) headers[key] = value;
    headers['host'] = endpoint.servername;
    headers[USER_HEADER] = user.username;
    if (user.groups.length > 0) headers[GROUP_HEADER] = [...user.groups];
    return {
      host: endpoint.host, port: endpoint.port, method: req.method ?? 'GET', path: req.url ?? '/', headers, agent: false,
      servername: endpoint.servername, rejectUnauthorized: !endpoint.insecure,
      ...(endpoint.ca === undefined ? {} : { ca: endpoint.ca }),
      cert: options.proxyClient.cert, key: options.proxyClient.key,
    };
  }
}

/** namespace, resource, name and subresource of the path under /apis/GROUP/VERSION; undefined for discovery. */
function resourceOf(rest: readonly string[]): { namespace: string; resource: string; name: string; subresource: string } | undefined {
  let parts = rest;
  let namespace = '';
  if (parts[0] === 'namespaces' && parts.length >= 3) {
    namespace = parts[1] ?? '';
    parts = parts.slice(2);
  }
  if (parts.length === 0) return undefined;
  return { namespace, resource: parts[0] ?? '', name: parts[1] ?? '', subresource: parts.slice(2).join('/') };
}

function unreachable(err: NodeJS.ErrnoException): ApiError {
  return new ApiError(503, 'ServiceUnavailable', `Error trying to reach service: '${err.code === 'ECONNREFUSED' ? 'connect: connection refused' : err.message}'`);
}

function withoutHopHeaders(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const copy = { ...headers };
  for (const h of ['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'proxy-connection']) delete copy[h];
  return copy;
}

function sendStatus(res: ServerResponse, err: ApiError): void {
  const text = JSON.stringify(err.toStatus());
  res.writeHead(err.httpCode, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

/** A refusal of an upgrade, on the raw socket. */
function writeRaw(socket: Duplex, err: ApiError): void {
  if (socket.destroyed) return;
  const text = JSON.stringify(err.toStatus());
  socket.end(`HTTP/1.1 ${err.httpCode} ${err.reason}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(text)}\r\nconnection: close\r\n\r\n${text}`);
}

