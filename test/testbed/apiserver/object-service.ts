import { randomUUID } from 'node:crypto';
import { jsonClone, jsonEqual, kubeTime } from '@podvirt/api';
import { ApiError, type ResourceRef } from './errors.js';
import { applyJsonPatch, applyMergePatch } from './json-patch.js';
import { isObject, meta, obj, str, type JsonObject, type JsonValue } from './json.js';
import { generateNameSuffix } from './object-meta.js';
import { apiVersionOf, type ResourceType } from './resource-type.js';
import type { Registry } from './registry.js';
import { applyStrategicMergePatch } from './strategic-merge-patch.js';
import type { Store } from './store.js';

// etcd's largest value (--max-request-bytes, 1.5 MiB): a bigger object is never stored.
const MAX_OBJECT_BYTES = 1.5 * 1024 * 1024;

export type PatchType = 'json' | 'merge' | 'strategic';

export interface WriteOptions {
  dryRun?: boolean;
}

/** The admission webhooks of one request (`admission/webhook-admission.ts`), on external objects. */
export interface AdmissionSteps {
  /** Returns the object the mutating webhooks leave; `object` is undefined on DELETE. */
  mutate(object: JsonObject | undefined, oldObject: JsonObject | undefined): Promise<JsonObject | undefined>;
  validate(object: JsonObject | undefined, oldObject: JsonObject | undefined): Promise<void>;
}

const serverOwnedMeta = ['uid', 'creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'generation', 'selfLink'];

/**
 * The verbs of the REST storage for every kind: create, get, update (main resource or
 * status subresource) and patch, independent of HTTP. Deletion lives in `object-deleter.ts`.
 */
export class ObjectService {
  constructor(
    readonly store: Store,
    readonly registry: Registry,
    readonly now: () => Date,
  ) {}

  ref(rt: ResourceType, name?: string): ResourceRef {
    const ref: ResourceRef = { group: rt.group, resource: rt.resource, kind: rt.kind };
    if (name !== undefined) ref.name = name;
    return ref;
  }

  external(rt: ResourceType, stored: JsonObject): JsonObject {
    return rt.strategy.toExternal?.(stored) ?? stored;
  }

  getStored(rt: ResourceType, namespace: string, name: string): JsonObject {
    const found = this.store.get(rt.storageKey, rt.namespaced ? namespace : '', name);
    if (found === undefined) throw ApiError.notFound(this.ref(rt, name));
    return found;
  }

  get(rt: ResourceType, namespace: string, name: string): JsonObject {
    return this.external(rt, this.getStored(rt, namespace, name));
  }

  create(rt: ResourceType, namespace: string, body: JsonValue, options: WriteOptions = {}): JsonObject {
    const object = this.#newObject(rt, namespace, body);
    this.#completeCreate(rt, object);
    return this.#storeCreate(rt, object, options);
  }

  /**
   * create with admission, in kube-apiserver's order: the mutating webhooks see the decoded,
   * defaulted object (before its name is generated and its uid set), the validating ones the
   * object as it will be stored.
   */
  async createAdmitted(rt: ResourceType, namespace: string, body: JsonValue, options: WriteOptions, admission: AdmissionSteps): Promise<JsonObject> {
    let object = this.#newObject(rt, namespace, body);
    const mutated = await admission.mutate(this.external(rt, object), undefined);
    if (mutated !== undefined) object = this.#newObject(rt, namespace, mutated);
    this.#completeCreate(rt, object);
    await admission.validate(this.external(rt, object), undefined);
    return this.#storeCreate(rt, object, options);
  }

  #newObject(rt: ResourceType, namespace: string, body: JsonValue): JsonObject {
    const object = this.#internal(rt, body);
    const m = meta(object);
    this.#settleNamespace(rt, m, namespace);
    if (rt.namespaced) this.#checkNamespaceOpen(rt, namespace, str(m['name']));
    for (const key of [...serverOwnedMeta, 'resourceVersion', 'managedFields']) delete m[key];
    rt.strategy.prune?.(object);
    rt.strategy.defaults?.(object);
    return object;
  }

  #completeCreate(rt: ResourceType, object: JsonObject): void {
    const m = meta(object);
    if ((str(m['name']) ?? '') === '' && typeof m['generateName'] === 'string' && m['generateName'] !== '') {
      // As Kubernetes' SimpleNameGenerator: the base is cut to 58 characters, so that base and
      // suffix fit a DNS label; a 253-character object's generated names stay valid.
      m['name'] = `${m['generateName'].slice(0, 58)}${generateNameSuffix()}`;
    }
    m['uid'] = randomUUID();
    m['creationTimestamp'] = kubeTime(this.now());
    m['generation'] = 1;
    rt.strategy.prepareForCreate(object);
    this.#validate(rt, object, undefined);
    this.#checkAbsent(rt, object);
  }

  #checkAbsent(rt: ResourceType, object: JsonObject): void {
    const name = str(meta(object)['name']) ?? '';
    if (this.store.get(rt.storageKey, str(meta(object)['namespace']) ?? '', name) !== undefined) {
      throw ApiError.alreadyExists(this.ref(rt, name));
    }
  }

  #storeCreate(rt: ResourceType, object: JsonObject, options: WriteOptions): JsonObject {
    this.#checkAbsent(rt, object);
    if (options.dryRun === true) return this.external(rt, object);
    return this.external(rt, this.store.put(rt.storageKey, object));
  }

  /** PUT: `body` replaces the object (or only its status, for the status subresource). */
  update(rt: ResourceType, namespace: string, name: string, body: JsonValue, subresource: string | undefined, options: WriteOptions = {}): JsonObject {
    const current = this.getStored(rt, namespace, name);
    return this.#write(rt, current, this.#internal(rt, body), subresource, options);
  }

  patch(rt: ResourceType, namespace: string, name: string, type: PatchType, patch: JsonValue, subresource: string | undefined, options: WriteOptions = {}): JsonObject {
    const current = this.getStored(rt, namespace, name);
    return this.#write(rt, current, this.#patched(rt, current, type, patch), subresource, options);
  }

  /**
   * update (a PUT body) or patch with admission. As kube-apiserver's GuaranteedUpdate, a write
   * whose object changed while the webhooks were asked is tried again from the new object
   * (webhooks included); one that named a resourceVersion then fails with a conflict.
   */
  async writeAdmitted(
    rt: ResourceType, namespace: string, name: string,
    change: { type: 'update'; body: JsonValue } | { type: PatchType; patch: JsonValue },
    subresource: string | undefined, options: WriteOptions, admission: AdmissionSteps,
  ): Promise<JsonObject> {
    for (let attempt = 0; ; attempt++) {
      const current = this.getStored(rt, namespace, name);
      const next = change.type === 'update' ? this.#internal(rt, change.body) : this.#patched(rt, current, change.type, change.patch);
      let result = this.#prepareWrite(rt, current, next, subresource);
      const old = this.external(rt, current);
      const mutated = await admission.mutate(this.external(rt, result), old);
      if (mutated !== undefined) result = this.#prepareWrite(rt, current, this.#internal(rt, mutated), subresource);
      this.#completeWrite(rt, current, result);
      await admission.validate(this.external(rt, result), old);
      const now = this.store.get(rt.storageKey, rt.namespaced ? namespace : '', name);
      if (now !== undefined && meta(now)['resourceVersion'] !== meta(current)['resourceVersion'] && attempt < 5) continue;
      return this.#storeWrite(rt, current, result, options);
    }
  }

  #patched(rt: ResourceType, current: JsonObject, type: PatchType, patch: JsonValue): JsonObject {
    const external = this.external(rt, current);
    let patched: JsonValue;
    if (type === 'merge') patched = applyMergePatch(external, patch);
    else if (type === 'json') patched = applyJsonPatch(external, patch);
    else if (rt.strategicMerge) patched = applyStrategicMergePatch(external, patch);
    else throw ApiError.unsupportedMediaType('application/strategic-merge-patch+json');
    return this.#internal(rt, patched);
  }

  /** Writes `next` over `current` with update semantics; removes the object when its deletion is complete. */
  #write(rt: ResourceType, current: JsonObject, next: JsonObject, subresource: string | undefined, options: WriteOptions): JsonObject {
    const result = this.#prepareWrite(rt, current, next, subresource);
    this.#completeWrite(rt, current, result);
    return this.#storeWrite(rt, current, result, options);
  }

  #prepareWrite(rt: ResourceType, current: JsonObject, next: JsonObject, subresource: string | undefined): JsonObject {
    const currentMeta = meta(current);
    const m = meta(next);
    const name = str(currentMeta['name']) ?? '';
    if (str(m['name']) !== undefined && m['name'] !== name) {
      throw ApiError.badRequest(`the name of the object (${String(m['name'])}) does not match the name on the URL (${name})`);
    }
    if (rt.namespaced && str(m['namespace']) !== undefined && m['namespace'] !== currentMeta['namespace']) {
      throw ApiError.badRequest('the namespace of the provided object does not match the namespace sent on the request');
    }
    if (str(m['resourceVersion']) !== undefined && m['resourceVersion'] !== currentMeta['resourceVersion']) {
      throw ApiError.staleUpdate(this.ref(rt, name));
    }
    if (str(m['uid']) !== undefined && m['uid'] !== currentMeta['uid']) {
      throw ApiError.conflict(this.ref(rt, name), `Precondition failed: UID in precondition: ${String(m['uid'])}, UID in object meta: ${String(currentMeta['uid'])}`);
    }
    const result = this.#merge(rt, current, next, subresource);
    rt.strategy.prune?.(result);
    rt.strategy.defaults?.(result);
    return result;
  }

  #completeWrite(rt: ResourceType, current: JsonObject, result: JsonObject): void {
    this.#validate(rt, result, current);
    if (!jsonEqual(result['spec'], current['spec'])) {
      const generation = meta(current)['generation'];
      meta(result)['generation'] = (typeof generation === 'number' ? generation : 0) + 1;
    }
  }

  #storeWrite(rt: ResourceType, current: JsonObject, result: JsonObject, options: WriteOptions): JsonObject {
    const currentMeta = meta(current);
    const name = str(currentMeta['name']) ?? '';
    const stored = this.store.get(rt.storageKey, str(currentMeta['namespace']) ?? '', name);
    if (stored === undefined) throw ApiError.notFound(this.ref(rt, name));
    if (meta(stored)['resourceVersion'] !== currentMeta['resourceVersion']) throw ApiError.staleUpdate(this.ref(rt, name));
    if (jsonEqual(result, current)) return this.external(rt, current);
    if (options.dryRun === true) return this.external(rt, result);
    if (this.deletionComplete(rt, result)) {
      return this.external(rt, this.store.remove(rt.storageKey, str(currentMeta['namespace']) ?? '', name) ?? result);
    }
    return this.external(rt, this.store.put(rt.storageKey, result));
  }

  /** An object being deleted goes once nothing holds it: finalizers, and for pods the kubelet's grace-0 confirmation. */
  deletionComplete(rt: ResourceType, object: JsonObject): boolean {
    const m = meta(object);
    if (m['deletionTimestamp'] === undefined) return false;
    const finalizers = m['finalizers'];
    if (Array.isArray(finalizers) && finalizers.length > 0) return false;
    if (rt.strategy.holdDeletion?.(object) === true) return false;
    return rt.strategy.deleteGrace === undefined || m['deletionGracePeriodSeconds'] === 0;
  }

  #merge(rt: ResourceType, current: JsonObject, next: JsonObject, subresource: string | undefined): JsonObject {
    const hasStatus = rt.subresources.includes('status');
    if (subresource === 'status') {
      if (!hasStatus) throw ApiError.notFound(this.ref(rt, str(meta(current)['name'])));
      const result = jsonClone(current);
      if (next['status'] === undefined) delete result['status'];
      else result['status'] = next['status'];
      return result;
    }
    const result = jsonClone(next);
    const m = meta(result);
    const currentMeta = meta(current);
    for (const key of [...serverOwnedMeta, 'namespace', 'name', 'resourceVersion']) {
      if (currentMeta[key] === undefined) delete m[key];
      else m[key] = jsonClone(currentMeta[key] as JsonValue);
    }
    delete m['managedFields'];
    result['apiVersion'] = current['apiVersion'] ?? null;
    result['kind'] = current['kind'] ?? null;
    if (hasStatus) {
      if (current['status'] === undefined) delete result['status'];
      else result['status'] = current['status'] ?? null;
    }
    return result;
  }

  #internal(rt: ResourceType, body: JsonValue): JsonObject {
    if (!isObject(body)) throw ApiError.badRequest('the body of the request must be a JSON object');
    const kind = body['kind'];
    if (kind !== undefined && kind !== rt.kind) {
      throw ApiError.badRequest(`the kind in the data (${String(kind)}) does not match the expected kind (${rt.kind})`);
    }
    const internal = rt.strategy.fromExternal?.(jsonClone(body)) ?? jsonClone(body);
    const storageType = this.registry.byStorageKey(rt.storageKey)[0] ?? rt;
    internal['apiVersion'] = apiVersionOf(storageType);
    internal['kind'] = rt.kind;
    meta(internal);
    return internal;
  }

  #settleNamespace(rt: ResourceType, m: JsonObject, namespace: string): void {
    if (!rt.namespaced) {
      delete m['namespace'];
      return;
    }
    const given = str(m['namespace']);
    if (given !== undefined && given !== '' && given !== namespace) {
      throw ApiError.badRequest('the namespace of the provided object does not match the namespace sent on the request');
    }
    m['namespace'] = namespace;
  }

  #checkNamespaceOpen(rt: ResourceType, namespace: string, name: string | undefined): void {
    const ns = this.store.get('namespaces', '', namespace);
    if (ns === undefined) throw ApiError.notFound({ group: '', resource: 'namespaces', name: namespace });
    if (meta(ns)['deletionTimestamp'] !== undefined) {
      throw ApiError.forbidden(this.ref(rt, name ?? ''), `unable to create new content in namespace ${namespace} because it is being terminated`);
    }
  }

  #validate(rt: ResourceType, object: JsonObject, old: JsonObject | undefined): void {
    const causes = rt.strategy.validate(object, old);
    if (causes.length > 0) throw ApiError.invalid(this.ref(rt, str(meta(object)['name']) ?? ''), causes);
    const size = Buffer.byteLength(JSON.stringify(object));
    if (size > MAX_OBJECT_BYTES) {
      throw new ApiError(413, 'RequestEntityTooLarge', `Request entity too large: the object is ${size} bytes, the limit is ${MAX_OBJECT_BYTES}`);
    }
  }

  /** The pods/binding subresource: assigns an unbound pod to a node, as the scheduler does. */
  bind(rt: ResourceType, namespace: string, name: string, binding: JsonValue, options: WriteOptions = {}): JsonObject {
    const node = str(obj(isObject(binding) ? binding['target'] : undefined)?.['name']);
    if (node === undefined || node === '') throw ApiError.invalid(this.ref(rt, name), [{ reason: 'FieldValueRequired', message: 'Required value', field: 'target.name' }]);
    const pod = this.getStored(rt, namespace, name);
    const spec = obj(pod['spec']) ?? {};
    const bindingRef = { group: '', resource: 'pods/binding', name };
    if (meta(pod)['deletionTimestamp'] !== undefined) throw ApiError.conflict(bindingRef, `pod ${name} is being deleted, cannot be assigned to a host`);
    if (str(spec['nodeName']) !== undefined) throw ApiError.conflict(bindingRef, `pod ${name} is already assigned to node "${String(spec['nodeName'])}"`);
    spec['nodeName'] = node;
    pod['spec'] = spec;
    const status = obj(pod['status']) ?? {};
    const conditions = (Array.isArray(status['conditions']) ? status['conditions'] : []).filter((c) => !(isObject(c) && c['type'] === 'PodScheduled'));
    conditions.push({ type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: kubeTime(this.now()) });
    status['conditions'] = conditions;
    pod['status'] = status;
    if (options.dryRun !== true) this.store.put(rt.storageKey, pod);
    return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 };
  }
}
