// Typed access to one kind of object over the thin client: the one place where a resource's REST
// paths are spelled. A kind is a descriptor (group, version, plural, scope), not a class, so the
// controller's VMIs, migrations, pods and Leases, the handler's VMIs and Node, the Events of
// every process and podvirtctl's migrations all go through this one client. Refusals come back
// as KubeApiError / KubeClientError, unchanged; each process maps them to its own codes once.

import type { ListWatchSource, ObjectList } from './informer.js';
import { isKubeApiError } from './kube-api-error.js';
import { MERGE_PATCH, type KubeClient } from './kube-client.js';
import { kubeListWatch } from './kube-list-watch.js';
import type { KubeObject } from './object-key.js';

/** Which REST collection a kind lives in. */
export interface KubeResource {
  /** '' for the core group (`/api/v1`). */
  readonly group: string;
  readonly version: string;
  readonly plural: string;
  /** Cluster-scoped kinds (Node) have no namespace in their paths. */
  readonly namespaced: boolean;
}

export interface Selectors {
  readonly labelSelector?: string | undefined;
  readonly fieldSelector?: string | undefined;
}

export const PODS: KubeResource = { group: '', version: 'v1', plural: 'pods', namespaced: true };
export const NODES: KubeResource = { group: '', version: 'v1', plural: 'nodes', namespaced: false };
export const EVENTS: KubeResource = { group: '', version: 'v1', plural: 'events', namespaced: true };
export const PERSISTENT_VOLUME_CLAIMS: KubeResource = { group: '', version: 'v1', plural: 'persistentvolumeclaims', namespaced: true };
export const LEASES: KubeResource = { group: 'coordination.k8s.io', version: 'v1', plural: 'leases', namespaced: true };

export class ResourceClient<T extends KubeObject> {
  readonly #client: KubeClient;
  readonly #resource: KubeResource;

  constructor(client: KubeClient, resource: KubeResource) {
    this.#client = client;
    this.#resource = resource;
  }

  /** The collection: in one namespace, or across all of them when `namespace` is undefined or ''. */
  collectionPath(namespace?: string): string {
    const { group, version, plural, namespaced } = this.#resource;
    const root = group === '' ? `/api/${version}` : `/apis/${group}/${version}`;
    const scope = namespaced && namespace ? `/namespaces/${encodeURIComponent(namespace)}` : '';
    return `${root}${scope}/${plural}`;
  }

  /** One object; `namespace` is ignored for a cluster-scoped kind. */
  objectPath(namespace: string | undefined, name: string): string {
    return `${this.collectionPath(namespace)}/${encodeURIComponent(name)}`;
  }

  /** A fresh read; undefined when the object does not exist. */
  async get(namespace: string | undefined, name: string, signal?: AbortSignal): Promise<T | undefined> {
    try {
      return await this.#client.request<T>({ path: this.objectPath(namespace, name), ...opt(signal) });
    } catch (err) {
      if (isKubeApiError(err, 'KUBE_ERR_NOT_FOUND')) return undefined;
      throw err;
    }
  }

  /** Every object of the collection that matches, with the version to watch from. */
  list(namespace: string | undefined, selectors: Selectors, signal: AbortSignal): Promise<ObjectList<T>> {
    return this.listWatch(namespace, selectors).list(signal);
  }

  /** The list and watch an Informer runs on. */
  listWatch(namespace: string | undefined, selectors: Selectors = {}): ListWatchSource<T> {
    return kubeListWatch<T>(this.#client, { path: this.collectionPath(namespace), ...selectors });
  }

  async create(namespace: string | undefined, object: T, signal?: AbortSignal): Promise<T> {
    return this.#client.request<T>({ method: 'POST', path: this.collectionPath(namespace), body: object, ...opt(signal) });
  }

  /** PUT of the whole object, guarded by its `metadata.resourceVersion` when it has one. */
  async replace(object: T, signal?: AbortSignal): Promise<T> {
    return this.#client.request<T>({ method: 'PUT', path: this.#own(object), body: object, ...opt(signal) });
  }

  /** PUT to the status subresource: only `status` is taken, guarded by the resourceVersion. */
  async replaceStatus(object: T, signal?: AbortSignal): Promise<T> {
    return this.#client.request<T>({ method: 'PUT', path: `${this.#own(object)}/status`, body: object, ...opt(signal) });
  }

  /** A JSON merge patch (RFC 7386): `null` removes a key; a `metadata.resourceVersion` in it guards it. */
  async mergePatch(namespace: string | undefined, name: string, patch: unknown, signal?: AbortSignal): Promise<T> {
    return this.#client.request<T>({ method: 'PATCH', path: this.objectPath(namespace, name), body: patch, contentType: MERGE_PATCH, ...opt(signal) });
  }

  /** A JSON merge patch of the status subresource (what the object's own patch leaves untouched). */
  async mergePatchStatus(namespace: string | undefined, name: string, patch: unknown, signal?: AbortSignal): Promise<T> {
    return this.#client.request<T>({ method: 'PATCH', path: `${this.objectPath(namespace, name)}/status`, body: patch, contentType: MERGE_PATCH, ...opt(signal) });
  }

  /**
   * Deletes the object; false when it was gone already. With `uid`, only that incarnation is
   * deleted: a namesake made since fails the precondition (409), which means ours is gone too.
   */
  async delete(namespace: string | undefined, name: string, options: { readonly uid?: string | undefined } = {}, signal?: AbortSignal): Promise<boolean> {
    const body = options.uid === undefined ? undefined : { preconditions: { uid: options.uid } };
    try {
      await this.#client.request({ method: 'DELETE', path: this.objectPath(namespace, name), ...(body === undefined ? {} : { body }), ...opt(signal) });
      return true;
    } catch (err) {
      if (isKubeApiError(err) && (err.code === 'KUBE_ERR_NOT_FOUND' || (options.uid !== undefined && err.status === 409))) return false;
      throw err;
    }
  }

  #own(object: T): string {
    return this.objectPath(object.metadata?.namespace ?? '', object.metadata?.name ?? '');
  }
}

function opt(signal: AbortSignal | undefined): { signal?: AbortSignal } {
  return signal === undefined ? {} : { signal };
}
