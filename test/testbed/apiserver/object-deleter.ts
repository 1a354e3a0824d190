import { jsonEqual, kubeTime } from '@podvirt/api';
import { ApiError } from './errors.js';
import { arr, isObject, meta, obj, str, type JsonObject, type JsonValue } from './json.js';
import type { ObjectService, WriteOptions } from './object-service.js';
import type { ResourceType } from './resource-type.js';

export interface DeleteOptions {
  gracePeriodSeconds?: number;
  propagationPolicy?: 'Orphan' | 'Background' | 'Foreground';
  preconditions?: { uid?: string; resourceVersion?: string };
}

/** Reads metav1.DeleteOptions from a request body and query (the query wins, as in Kubernetes). */
export function parseDeleteOptions(body: JsonValue | undefined, query: URLSearchParams): DeleteOptions {
  const source = isObject(body) ? body : {};
  const options: DeleteOptions = {};
  const grace = query.get('gracePeriodSeconds') ?? source['gracePeriodSeconds'];
  if (grace !== undefined && grace !== null) options.gracePeriodSeconds = Math.max(0, Number(grace));
  const policy = query.get('propagationPolicy') ?? source['propagationPolicy'];
  if (policy === 'Orphan' || policy === 'Background' || policy === 'Foreground') options.propagationPolicy = policy;
  else if (policy !== undefined && policy !== null) throw ApiError.badRequest(`invalid propagationPolicy: ${String(policy)}`);
  if (source['orphanDependents'] === true || query.get('orphanDependents') === 'true') options.propagationPolicy ??= 'Orphan';
  const pre = obj(source['preconditions']);
  if (pre !== undefined) {
    options.preconditions = {};
    const uid = str(pre['uid']);
    const rv = str(pre['resourceVersion']);
    if (uid !== undefined) options.preconditions.uid = uid;
    if (rv !== undefined) options.preconditions.resourceVersion = rv;
  }
  return options;
}

/**
 * DELETE semantics: preconditions, graceful deletion (pods wait for their kubelet),
 * finalizers and deletionTimestamp, orphaning and foreground propagation. Background
 * propagation is the garbage collector's job once the owner is gone.
 */
export class ObjectDeleter {
  constructor(private readonly service: ObjectService) {}

  delete(rt: ResourceType, namespace: string, name: string, options: DeleteOptions, write: WriteOptions = {}): JsonObject {
    const store = this.service.store;
    const current = this.service.getStored(rt, namespace, name);
    const m = meta(current);
    this.#checkPreconditions(rt, current, options);
    const dryRun = write.dryRun === true;
    const policy = options.propagationPolicy ?? 'Background';
    if (policy === 'Orphan' && !dryRun) this.#orphanDependents(str(m['uid']) ?? '');
    if (policy === 'Foreground') {
      const finalizers = arr(m['finalizers']);
      if (!finalizers.includes('foregroundDeletion')) m['finalizers'] = [...finalizers, 'foregroundDeletion'];
    }
    const grace = rt.strategy.deleteGrace?.(current, options.gracePeriodSeconds) ?? 0;
    const ns = str(m['namespace']) ?? '';
    const save = (): JsonObject => this.service.external(rt, dryRun ? current : store.put(rt.storageKey, current));
    if (grace > 0) {
      const previous = m['deletionGracePeriodSeconds'];
      if (m['deletionTimestamp'] !== undefined && typeof previous === 'number' && previous <= grace) {
        return this.service.external(rt, current);
      }
      m['deletionTimestamp'] = kubeTime(new Date(this.service.now().getTime() + grace * 1000));
      m['deletionGracePeriodSeconds'] = grace;
      const generation = m['generation'];
      m['generation'] = (typeof generation === 'number' ? generation : 0) + 1;
      return save();
    }
    const deletionStarted = m['deletionTimestamp'] !== undefined;
    m['deletionTimestamp'] ??= kubeTime(this.service.now());
    m['deletionGracePeriodSeconds'] = 0;
    if (!this.service.deletionComplete(rt, current)) {
      return deletionStarted && !this.#changed(rt, namespace, name, current) ? this.service.external(rt, current) : save();
    }
    if (dryRun) return this.service.external(rt, current);
    return this.service.external(rt, store.remove(rt.storageKey, ns, name) ?? current);
  }

  #changed(rt: ResourceType, namespace: string, name: string, next: JsonObject): boolean {
    const stored = this.service.getStored(rt, namespace, name);
    return !jsonEqual(stored, next);
  }

  #checkPreconditions(rt: ResourceType, current: JsonObject, options: DeleteOptions): void {
    const m = meta(current);
    const ref = this.service.ref(rt, str(m['name']));
    const pre = options.preconditions;
    if (pre?.uid !== undefined && pre.uid !== m['uid']) {
      throw ApiError.conflict(ref, `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${String(m['uid'])}`);
    }
    if (pre?.resourceVersion !== undefined && pre.resourceVersion !== m['resourceVersion']) {
      throw ApiError.conflict(ref, `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${String(m['resourceVersion'])}`);
    }
  }

  /** Orphan propagation: dependents lose their reference to the owner and survive it. */
  #orphanDependents(uid: string): void {
    for (const { storageKey, object } of this.service.store.all()) {
      const m = meta(object);
      const refs = arr(m['ownerReferences']);
      const kept = refs.filter((r) => !(isObject(r) && r['uid'] === uid));
      if (kept.length === refs.length) continue;
      if (kept.length === 0) delete m['ownerReferences'];
      else m['ownerReferences'] = kept;
      this.service.store.put(storageKey, object);
    }
  }
}
