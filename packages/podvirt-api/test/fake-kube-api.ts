// An API server in a map, for the certificate keepers' tests: GET, POST (AlreadyExists), PUT
// (Conflict on a stale resourceVersion); records every write.
import { KubeApiError, type KubeClient, type KubeRequest } from '@podvirt/kube-runtime';

export type Obj = { metadata: { name?: string; resourceVersion?: string }; [k: string]: unknown };

/** An API server in a map: GET, POST (AlreadyExists), PUT (Conflict on a stale resourceVersion); counts writes. */
export class FakeApi {
  readonly objects = new Map<string, Obj>();
  readonly writes: string[] = [];
  /** GETs of these paths answer 404 once, as a read that raced another writer. */
  readonly staleOnce = new Set<string>();
  #rv = 1;

  client(): KubeClient {
    return { request: async (r: KubeRequest) => this.#request(r) } as unknown as KubeClient;
  }

  put(path: string, obj: Obj): void {
    this.objects.set(path, { ...obj, metadata: { ...obj.metadata, resourceVersion: String(this.#rv++) } });
  }

  async #request(r: KubeRequest): Promise<unknown> {
    const method = r.method ?? 'GET';
    if (method === 'GET') {
      const obj = this.objects.get(r.path);
      if (obj === undefined || this.staleOnce.delete(r.path)) throw new KubeApiError(404, 'NotFound', `${r.path} not found`);
      return structuredClone(obj);
    }
    const body = structuredClone(r.body) as Obj;
    const path = method === 'POST' ? `${r.path}/${body.metadata.name ?? ''}` : r.path;
    this.writes.push(`${method} ${path}`);
    const existing = this.objects.get(path);
    if (method === 'POST' && existing !== undefined) throw new KubeApiError(409, 'AlreadyExists', 'exists');
    if (method === 'PUT' && existing?.metadata.resourceVersion !== body.metadata.resourceVersion) throw new KubeApiError(409, 'Conflict', 'stale');
    this.put(path, body);
    return this.objects.get(path);
  }
}
