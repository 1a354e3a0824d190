import { ApiError } from './errors.js';
import { meta, obj, str } from './json.js';
import type { ObjectDeleter } from './object-deleter.js';
import type { ObjectService } from './object-service.js';
import type { StoreEvent } from './store.js';

/**
 * Namespace deletion: a terminating namespace has its content deleted, and once nothing is
 * left its `kubernetes` finalizer is dropped so the namespace itself goes.
 */
export class NamespaceController {
  readonly #pending = new Map<string, NodeJS.Immediate>();
  #unsubscribe: (() => void) | undefined;

  constructor(
    private readonly service: ObjectService,
    private readonly deleter: ObjectDeleter,
  ) {}

  start(): void {
    this.#unsubscribe = this.service.store.subscribe((e) => this.#onEvent(e));
  }

  close(): void {
    this.#unsubscribe?.();
    for (const handle of this.#pending.values()) clearImmediate(handle);
    this.#pending.clear();
  }

  #onEvent(e: StoreEvent): void {
    const ns = e.storageKey === 'namespaces' ? e.name : e.namespace;
    if (ns === '' || this.#pending.has(ns)) return;
    const namespace = this.service.store.get('namespaces', '', ns);
    if (namespace === undefined || meta(namespace)['deletionTimestamp'] === undefined) return;
    const handle = setImmediate(() => {
      this.#pending.delete(ns);
      try {
        this.#finalize(ns);
      } catch (err) {
        if (!(err instanceof ApiError && (err.reason === 'NotFound' || err.reason === 'Conflict'))) throw err;
      }
    });
    this.#pending.set(ns, handle);
  }

  #finalize(ns: string): void {
    let remaining = 0;
    const seen = new Set<string>();
    for (const rt of this.service.registry.all()) {
      if (!rt.namespaced || seen.has(rt.storageKey)) continue;
      seen.add(rt.storageKey);
      for (const object of this.service.store.list(rt.storageKey, ns)) {
        remaining += 1;
        if (meta(object)['deletionTimestamp'] === undefined) {
          this.deleter.delete(rt, ns, str(meta(object)['name']) ?? '', { propagationPolicy: 'Background' });
        }
      }
    }
    if (remaining > 0) return;
    const nsType = this.service.registry.find('', 'v1', 'namespaces');
    const namespace = this.service.store.get('namespaces', '', ns);
    if (nsType === undefined || namespace === undefined) return;
    const spec = obj(namespace['spec']) ?? {};
    spec['finalizers'] = [];
    namespace['spec'] = spec;
    this.service.update(nsType, '', ns, namespace, undefined);
  }
}
