// The key of an object in a cache and a work queue: `namespace/name` as in client-go (just `name`
// for a cluster-scoped one), so an object recreated under the same name lands on the same key
// and its controller sees the old and the new UID together.

/** The smallest object shape the cache needs. */
export interface KubeObject {
  readonly metadata?: { readonly namespace?: string | undefined; readonly name?: string | undefined; readonly resourceVersion?: string | undefined } | undefined;
}

export function objectKey(obj: KubeObject): string {
  const m = obj.metadata;
  return m?.namespace ? `${m.namespace}/${m.name ?? ''}` : (m?.name ?? '');
}

/** The namespace ('' for a cluster-scoped key) and name of `key`. */
export function splitObjectKey(key: string): { namespace: string; name: string } {
  const slash = key.indexOf('/');
  return slash < 0 ? { namespace: '', name: key } : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}
