// What an audit log says about a request, in RBAC's terms (kube-apiserver's RequestInfo): the
// verb, API group, resource with subresource, namespace and name, and who asked (and with which
// client: the User-Agent). The testbed
// authenticates nobody: a bearer token is taken as the caller's user name, so a component run
// with its own kubeconfig (token `system:serviceaccount:<ns>:<name>`) is told apart.
import type { IncomingMessage } from 'node:http';
import type { Registry } from './registry.js';
import { route } from './router.js';

export interface RequestRecord {
  /** The bearer token, or '' without one. */
  readonly user: string;
  /** The User-Agent header, or '' without one. */
  readonly userAgent: string;
  /** get, list, watch, create, update, patch, delete, deletecollection. */
  readonly verb: string;
  readonly apiGroup: string;
  /** `pods`, or `virtualmachineinstances/status` for a subresource. */
  readonly resource: string;
  readonly namespace: string | undefined;
  readonly name: string | undefined;
}

export type RequestListener = (record: RequestRecord) => void;

/** The record of a resource request; undefined for discovery and other non-resource paths. */
export function describeRequest(registry: Registry, req: IncomingMessage): RequestRecord | undefined {
  const url = new URL(req.url ?? '/', 'http://apiserver');
  const r = route(registry, url.pathname);
  if (r.type !== 'resource') return undefined;
  const watching = r.watch || url.searchParams.get('watch') === 'true' || url.searchParams.get('watch') === '1';
  return {
    user: callerOf(req),
    userAgent: req.headers['user-agent'] ?? '',
    verb: verbOf(req.method ?? 'GET', r.name !== undefined, watching),
    apiGroup: r.rt.group,
    resource: r.subresource === undefined ? r.rt.resource : `${r.rt.resource}/${r.subresource}`,
    namespace: r.namespace,
    name: r.name,
  };
}

/**
 * The caller's user name: the user it impersonates (`Impersonate-User`, kubectl's `--as`: every
 * caller may, as every caller may do anything here), else the bearer token, else ''.
 */
export function callerOf(req: IncomingMessage): string {
  const impersonated = req.headers['impersonate-user'];
  if (typeof impersonated === 'string' && impersonated !== '') return impersonated;
  const auth = req.headers.authorization ?? '';
  return auth.startsWith('Bearer ') ? auth.slice('Bearer '.length) : '';
}

export function verbOf(method: string, named: boolean, watching: boolean): string {
  switch (method) {
    case 'GET': return watching ? 'watch' : named ? 'get' : 'list';
    case 'POST': return 'create';
    case 'PUT': return 'update';
    case 'PATCH': return 'patch';
    case 'DELETE': return named ? 'delete' : 'deletecollection';
    default: return method.toLowerCase();
  }
}
