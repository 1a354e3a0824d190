import type { Registry } from './registry.js';
import type { ResourceType } from './resource-type.js';

export type Route =
  | { type: 'version' }
  | { type: 'core-versions' }
  | { type: 'groups' }
  | { type: 'group'; group: string }
  | { type: 'resources'; group: string; version: string }
  | { type: 'openapi-v2' }
  | { type: 'openapi-v3-root' }
  | { type: 'openapi-v3-group'; group: string; version: string }
  | {
      type: 'resource';
      rt: ResourceType;
      /** Set for namespaced requests; undefined means all namespaces (or cluster-scoped). */
      namespace: string | undefined;
      name: string | undefined;
      subresource: string | undefined;
      /** The legacy `/watch/` path prefix. */
      watch: boolean;
    }
  | { type: 'not-found' };

/** Maps a URL path to what it names, following the Kubernetes REST path layout. */
export function route(registry: Registry, path: string): Route {
  const parts = path.split('/').filter((p) => p !== '').map((p) => decodeURIComponent(p));
  if (parts.length === 1 && parts[0] === 'version') return { type: 'version' };
  if (parts.length === 2 && parts[0] === 'openapi' && parts[1] === 'v2') return { type: 'openapi-v2' };
  if (parts[0] === 'openapi' && parts[1] === 'v3') {
    if (parts.length === 2) return { type: 'openapi-v3-root' };
    if (parts[2] === 'api' && parts.length === 4) return { type: 'openapi-v3-group', group: '', version: parts[3] ?? '' };
    if (parts[2] === 'apis' && parts.length === 5) return { type: 'openapi-v3-group', group: parts[3] ?? '', version: parts[4] ?? '' };
    return { type: 'not-found' };
  }
  let group: string;
  let version: string | undefined;
  let rest: string[];
  if (parts[0] === 'api') {
    if (parts.length === 1) return { type: 'core-versions' };
    group = '';
    version = parts[1];
    rest = parts.slice(2);
  } else if (parts[0] === 'apis') {
    if (parts.length === 1) return { type: 'groups' };
    group = parts[1] ?? '';
    if (parts.length === 2) return { type: 'group', group };
    version = parts[2];
    rest = parts.slice(3);
  } else {
    return { type: 'not-found' };
  }
  if (version === undefined) return { type: 'not-found' };
  if (rest.length === 0) return { type: 'resources', group, version };
  const watch = rest[0] === 'watch';
  if (watch) rest = rest.slice(1);
  return resourceRoute(registry, group, version, rest, watch);
}

function resourceRoute(registry: Registry, group: string, version: string, rest: string[], watch: boolean): Route {
  let namespace: string | undefined;
  if (rest[0] === 'namespaces' && rest.length >= 3) {
    const candidate = registry.find(group, version, rest[2] ?? '');
    if (candidate?.namespaced === true) {
      namespace = rest[1];
      rest = rest.slice(2);
    }
  }
  const rt = registry.find(group, version, rest[0] ?? '');
  if (rt === undefined || rest.length > 3) return { type: 'not-found' };
  const subresource = rest[2];
  if (subresource !== undefined && !(rt.subresources as string[]).includes(subresource)) return { type: 'not-found' };
  if (rt.namespaced && namespace === undefined && rest.length > 1) return { type: 'not-found' };
  return { type: 'resource', rt, namespace, name: rest[1], subresource, watch };
}
