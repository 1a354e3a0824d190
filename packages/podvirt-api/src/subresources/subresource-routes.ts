// KubeVirt's subresource API, as paths and verbs: which request is which operation. Pure, so the
// table is tested as a table. The aggregator forwards `/apis/subresources.kubevirt.io/...`
// unchanged, so these are the paths kube-apiserver's clients use.

export const SUBRESOURCE_GROUP = 'subresources.kubevirt.io';
export const SUBRESOURCE_VERSION = 'v1';
/** The APIService that routes the group here (manifests/40-api-subresources.yaml). */
export const SUBRESOURCE_API_SERVICE = `${SUBRESOURCE_VERSION}.${SUBRESOURCE_GROUP}`;
const PREFIX = `/apis/${SUBRESOURCE_GROUP}/${SUBRESOURCE_VERSION}`;

export type VmiOperation = 'pause' | 'unpause' | 'freeze' | 'unfreeze' | 'softreboot' | 'reset';
export type VmiQuery = 'guestosinfo' | 'userlist' | 'filesystemlist';
export type VmiStream = 'console' | 'vnc';
/** Hotplug: writes the VMI's spec through the Kubernetes API, no handler. */
export type VmiVolumeChange = 'addvolume' | 'removevolume';

/** What each VMI subresource is and the HTTP method KubeVirt serves it on. */
export const VMI_SUBRESOURCES = {
  pause: { kind: 'operation', method: 'PUT' },
  unpause: { kind: 'operation', method: 'PUT' },
  freeze: { kind: 'operation', method: 'PUT' },
  unfreeze: { kind: 'operation', method: 'PUT' },
  softreboot: { kind: 'operation', method: 'PUT' },
  reset: { kind: 'operation', method: 'PUT' },
  guestosinfo: { kind: 'query', method: 'GET' },
  userlist: { kind: 'query', method: 'GET' },
  filesystemlist: { kind: 'query', method: 'GET' },
  console: { kind: 'stream', method: 'GET' },
  vnc: { kind: 'stream', method: 'GET' },
  addvolume: { kind: 'volume', method: 'PUT' },
  removevolume: { kind: 'volume', method: 'PUT' },
} as const satisfies Record<VmiOperation | VmiQuery | VmiStream | VmiVolumeChange, { kind: 'operation' | 'query' | 'stream' | 'volume'; method: 'PUT' | 'GET' }>;

export type VmiSubresource = keyof typeof VMI_SUBRESOURCES;

/**
 * KubeVirt's VM subresources: each a PUT (RBAC `update`) that writes to the Kubernetes API;
 * addvolume and removevolume edit the VM's template and its running VMI.
 */
export const VM_SUBRESOURCES = ['start', 'stop', 'restart', 'migrate', 'addvolume', 'removevolume'] as const;
export type VmSubresource = (typeof VM_SUBRESOURCES)[number];

export type SubresourceRoute =
  | { readonly kind: 'not-ours' }
  | { readonly kind: 'discovery-group' }
  | { readonly kind: 'discovery-version' }
  | { readonly kind: 'vmi'; readonly namespace: string; readonly name: string; readonly subresource: VmiSubresource }
  | { readonly kind: 'vm'; readonly namespace: string; readonly name: string; readonly subresource: VmSubresource }
  /** Ours, but not served: 404 (unknown subresource) or 405 (known, other method). */
  | { readonly kind: 'refused'; readonly status: 404 | 405; readonly message: string };

export function isSubresourcePath(path: string): boolean {
  return path === `/apis/${SUBRESOURCE_GROUP}` || path.startsWith(`/apis/${SUBRESOURCE_GROUP}/`);
}

export function routeSubresource(method: string, path: string): SubresourceRoute {
  if (!isSubresourcePath(path)) return { kind: 'not-ours' };
  const trimmed = path.replace(/\/+$/, '');
  if (trimmed === `/apis/${SUBRESOURCE_GROUP}`) return method === 'GET' ? { kind: 'discovery-group' } : methodNotAllowed(method, path);
  if (trimmed === PREFIX) return method === 'GET' ? { kind: 'discovery-version' } : methodNotAllowed(method, path);
  const m = /^\/namespaces\/([^/]+)\/(virtualmachineinstances|virtualmachines)\/([^/]+)\/([^/]+)$/.exec(trimmed.slice(PREFIX.length));
  if (!trimmed.startsWith(`${PREFIX}/`) || m === null) return { kind: 'refused', status: 404, message: `nothing at ${path}` };
  const [, namespace = '', resource, name = '', sub = ''] = m;
  if (resource === 'virtualmachines') {
    if (!(VM_SUBRESOURCES as readonly string[]).includes(sub)) return { kind: 'refused', status: 404, message: `virtualmachines/${sub} is not a subresource podvirt serves` };
    if (method !== 'PUT') return methodNotAllowed(method, path);
    return { kind: 'vm', namespace: decodeURIComponent(namespace), name: decodeURIComponent(name), subresource: sub as VmSubresource };
  }
  if (!Object.hasOwn(VMI_SUBRESOURCES, sub)) return { kind: 'refused', status: 404, message: `virtualmachineinstances/${sub} is not a subresource podvirt serves` };
  const subresource = sub as VmiSubresource;
  if (VMI_SUBRESOURCES[subresource].method !== method) return methodNotAllowed(method, path);
  return { kind: 'vmi', namespace: decodeURIComponent(namespace), name: decodeURIComponent(name), subresource };
}

/** The verb RBAC checks for a VMI subresource: PUT is `update`, GET (the streams too) is `get`; every VM subresource is a PUT. */
export function rbacVerb(subresource: VmiSubresource): 'update' | 'get' {
  return VMI_SUBRESOURCES[subresource].method === 'PUT' ? 'update' : 'get';
}

function methodNotAllowed(method: string, path: string): SubresourceRoute {
  return { kind: 'refused', status: 405, message: `${method} is not allowed on ${path}` };
}
