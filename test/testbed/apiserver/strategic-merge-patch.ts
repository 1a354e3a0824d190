import { jsonClone, jsonEqual } from '@podvirt/api';
import { ApiError } from './errors.js';
import { isObject, type JsonObject, type JsonValue } from './json.js';

/**
 * Patch metadata of the built-in kinds podvirt's testbed serves, keyed by field name: lists
 * merged by a key (`patchMergeKey` in the Kubernetes Go types) or, for primitive lists with
 * `patchStrategy: merge`, by value. Every other list is replaced whole.
 */
const mergeKeys: Readonly<Record<string, string>> = {
  containers: 'name',
  initContainers: 'name',
  ephemeralContainers: 'name',
  volumes: 'name',
  volumeMounts: 'mountPath',
  volumeDevices: 'devicePath',
  env: 'name',
  ports: 'containerPort',
  conditions: 'type',
  ownerReferences: 'uid',
  imagePullSecrets: 'name',
  readinessGates: 'conditionType',
  addresses: 'type',
  taints: 'key',
  podIPs: 'ip',
  hostIPs: 'ip',
  hostAliases: 'ip',
  resourceClaims: 'name',
};
const primitiveMergeLists = new Set(['finalizers']);

const setOrderPrefix = '$setElementOrder/';
const deletePrimitivePrefix = '$deleteFromPrimitiveList/';

/** Applies a strategic merge patch (the subset kubectl and controllers send) to `original`. */
export function applyStrategicMergePatch(original: JsonValue, patch: JsonValue): JsonValue {
  if (!isObject(patch)) throw ApiError.badRequest('strategic merge patch must be a JSON object');
  return mergeMap(isObject(original) ? original : {}, patch) ?? {};
}

function mergeMap(original: JsonObject, patch: JsonObject): JsonObject | null {
  const directive = patch['$patch'];
  if (directive === 'delete') return null;
  if (directive === 'replace') return withoutDirectives(patch);
  const result = jsonClone(original);
  const retain = patch['$retainKeys'];
  if (Array.isArray(retain)) {
    for (const key of Object.keys(result)) if (!retain.includes(key)) delete result[key];
  }
  const orders: Array<[string, JsonValue[]]> = [];
  for (const [key, value] of Object.entries(patch)) {
    if (key === '$patch' || key === '$retainKeys') continue;
    if (key.startsWith(setOrderPrefix)) {
      if (Array.isArray(value)) orders.push([key.slice(setOrderPrefix.length), value]);
      continue;
    }
    if (key.startsWith(deletePrimitivePrefix)) {
      const field = key.slice(deletePrimitivePrefix.length);
      const current = result[field];
      if (Array.isArray(current) && Array.isArray(value)) {
        result[field] = current.filter((item) => !value.some((v) => jsonEqual(v, item)));
      }
      continue;
    }
    mergeField(result, key, value);
  }
  for (const [field, order] of orders) reorder(result, field, order);
  return result;
}

function mergeField(result: JsonObject, key: string, value: JsonValue): void {
  if (value === null) {
    delete result[key];
    return;
  }
  const current = result[key];
  if (isObject(value)) {
    const merged = mergeMap(isObject(current) ? current : {}, value);
    if (merged === null) delete result[key];
    else result[key] = merged;
    return;
  }
  if (Array.isArray(value)) {
    result[key] = mergeList(key, Array.isArray(current) ? current : [], value);
    return;
  }
  result[key] = value;
}

function mergeList(field: string, original: JsonValue[], patch: JsonValue[]): JsonValue[] {
  if (patch.some((item) => isObject(item) && item['$patch'] === 'replace')) {
    return patch.filter((item) => !(isObject(item) && item['$patch'] === 'replace')).map((i) => stripDeep(i));
  }
  if (primitiveMergeLists.has(field)) {
    const result = [...original];
    for (const item of patch) if (!result.some((r) => jsonEqual(r, item))) result.push(item);
    return result;
  }
  const key = mergeKeys[field];
  if (key === undefined) return patch.map((i) => stripDeep(i));
  const result = original.map((i) => jsonClone(i));
  for (const item of patch) {
    if (!isObject(item)) continue;
    const index = result.findIndex((r) => isObject(r) && jsonEqual(r[key], item[key]));
    if (item['$patch'] === 'delete') {
      if (index >= 0) result.splice(index, 1);
      continue;
    }
    const existing = index >= 0 ? result[index] : undefined;
    if (isObject(existing)) {
      const merged = mergeMap(existing, item);
      if (merged === null) result.splice(index, 1);
      else result[index] = merged;
    } else {
      result.push(stripDeep(item));
    }
  }
  return result;
}

/** `$setElementOrder`: listed elements first, in the given order; the rest keep their order. */
function reorder(result: JsonObject, field: string, order: JsonValue[]): void {
  const list = result[field];
  if (!Array.isArray(list)) return;
  const key = mergeKeys[field];
  const identity = (item: JsonValue): JsonValue => (key !== undefined && isObject(item) ? (item[key] ?? null) : item);
  const wanted = order.map(identity);
  const ranked = list.map((item, i) => {
    const rank = wanted.findIndex((w) => jsonEqual(w, identity(item)));
    return { item, rank: rank < 0 ? wanted.length + i : rank };
  });
  ranked.sort((a, b) => a.rank - b.rank);
  result[field] = ranked.map((r) => r.item);
}

function withoutDirectives(patch: JsonObject): JsonObject {
  return stripDeep(patch) as JsonObject;
}

function stripDeep(value: JsonValue): JsonValue {
  if (Array.isArray(value)) return value.map((v) => stripDeep(v));
  if (!isObject(value)) return value;
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(value)) {
    if (k.startsWith('$')) continue;
    if (v === null) continue;
    out[k] = stripDeep(v);
  }
  return out;
}
