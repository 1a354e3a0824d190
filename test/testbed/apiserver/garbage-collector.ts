import { ApiError } from './errors.js';
import { arr, isObject, meta, str, type JsonObject } from './json.js';
import type { ObjectDeleter } from './object-deleter.js';
import type { ObjectService } from './object-service.js';
import type { ResourceType } from './resource-type.js';
import type { StoreEvent } from './store.js';

/**
 * Background garbage collection by ownerReferences: when an owner is gone its dependents are
 * deleted (or only lose the reference while another owner lives), and an owner in
 * foreground deletion keeps its `foregroundDeletion` finalizer until its dependents are gone.
 */
export class GarbageCollector {
  readonly #pending = new Set<NodeJS.Immediate>();
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
    for (const handle of this.#pending) clearImmediate(handle);
    this.#pending.clear();
  }

  #onEvent(e: StoreEvent): void {
    const m = meta(e.object);
    if (e.type === 'DELETED') {
      const uid = str(m['uid']);
      if (uid !== undefined) this.#later(() => this.#collect(uid));
      for (const ref of arr(m['ownerReferences'])) {
        if (isObject(ref) && typeof ref['uid'] === 'string') {
          const owner = ref['uid'];
          this.#later(() => this.#foreground(owner));
        }
      }
    } else if (m['deletionTimestamp'] !== undefined && arr(m['finalizers']).includes('foregroundDeletion')) {
      const uid = str(m['uid']);
      if (uid !== undefined) this.#later(() => this.#foreground(uid));
    }
  }

  #later(work: () => void): void {
    const handle = setImmediate(() => {
      this.#pending.delete(handle);
      try {
        work();
      } catch (err) {
        if (!(err instanceof ApiError && (err.reason === 'NotFound' || err.reason === 'Conflict'))) throw err;
      }
    });
    this.#pending.add(handle);
  }

  #dependents(uid: string): Array<{ rt: ResourceType; object: JsonObject }> {
    return this.service.store
      .all()
      .filter(({ object }) => arr(meta(object)['ownerReferences']).some((r) => isObject(r) && r['uid'] === uid))
      .flatMap(({ storageKey, object }) => {
        const rt = this.service.registry.byStorageKey(storageKey)[0];
        return rt === undefined ? [] : [{ rt, object }];
      });
  }

  #exists(uid: string): boolean {
    return this.service.store.all().some(({ object }) => meta(object)['uid'] === uid);
  }

  #collect(ownerUid: string): void {
    for (const { rt, object } of this.#dependents(ownerUid)) {
      const m = meta(object);
      const refs = arr(m['ownerReferences']).filter(isObject);
      const otherLive = refs.some((r) => r['uid'] !== ownerUid && typeof r['uid'] === 'string' && this.#exists(r['uid']));
      const ns = str(m['namespace']) ?? '';
      const name = str(m['name']) ?? '';
      if (otherLive) {
        m['ownerReferences'] = refs.filter((r) => r['uid'] !== ownerUid);
        this.service.update(rt, ns, name, object, undefined);
      } else if (m['deletionTimestamp'] === undefined) {
        this.deleter.delete(rt, ns, name, { propagationPolicy: 'Background' });
      }
    }
  }

  #foreground(ownerUid: string): void {
    const owner = this.service.store.all().find(({ object }) => meta(object)['uid'] === ownerUid);
    if (owner === undefined) return;
    const m = meta(owner.object);
    if (m['deletionTimestamp'] === undefined || !arr(m['finalizers']).includes('foregroundDeletion')) return;
    const dependents = this.#dependents(ownerUid);
    const rt = this.service.registry.byStorageKey(owner.storageKey)[0];
    if (rt === undefined) return;
    if (dependents.length === 0) {
      m['finalizers'] = arr(m['finalizers']).filter((f) => f !== 'foregroundDeletion');
      this.service.update(rt, str(m['namespace']) ?? '', str(m['name']) ?? '', owner.object, undefined);
      return;
    }
    for (const d of dependents) {
      const dm = meta(d.object);
      if (dm['deletionTimestamp'] === undefined) {
        this.deleter.delete(d.rt, str(dm['namespace']) ?? '', str(dm['name']) ?? '', { propagationPolicy: 'Background' });
      }
    }
  }
}
