import { jsonClone, jsonEqual } from '@podvirt/api';
import { ApiError } from './errors.js';
import { isObject, type JsonObject, type JsonValue } from './json.js';

/** RFC 7386 JSON merge patch: objects merge recursively, `null` deletes, everything else replaces. */
export function applyMergePatch(target: JsonValue, patch: JsonValue): JsonValue {
  if (!isObject(patch)) return jsonClone(patch);
  const result: JsonObject = isObject(target) ? jsonClone(target) : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = applyMergePatch(result[key] ?? null, value);
  }
  return result;
}

/** RFC 6902 JSON patch (add, remove, replace, move, copy, test) over JSON pointers. */
export function applyJsonPatch(target: JsonValue, operations: JsonValue): JsonValue {
  if (!Array.isArray(operations)) throw ApiError.badRequest('json patch must be an array of operations');
  let doc = jsonClone(target);
  for (const op of operations) {
    if (!isObject(op) || typeof op['op'] !== 'string' || typeof op['path'] !== 'string') {
      throw ApiError.badRequest('json patch operation must have "op" and "path"');
    }
    doc = applyOne(doc, op['op'], pointer(op['path']), op);
  }
  return doc;
}

function applyOne(doc: JsonValue, kind: string, path: string[], op: JsonObject): JsonValue {
  switch (kind) {
    case 'add':
      return insert(doc, path, need(op, 'value'));
    case 'remove':
      return removeAt(doc, path).doc;
    case 'replace':
      get(doc, path);
      return insert(removeAt(doc, path).doc, path, need(op, 'value'));
    case 'move': {
      const from = pointer(String(need(op, 'from')));
      const removed = removeAt(doc, from);
      return insert(removed.doc, path, removed.value);
    }
    case 'copy':
      return insert(doc, path, jsonClone(get(doc, pointer(String(need(op, 'from'))))));
    case 'test':
      if (!jsonEqual(get(doc, path), need(op, 'value'))) {
        throw new ApiError(422, 'Invalid', `the server rejected our request due to an error in our request: testing value /${path.join('/')} failed`);
      }
      return doc;
    default:
      throw ApiError.badRequest(`Unexpected kind: ${kind}`);
  }
}

function need(op: JsonObject, key: string): JsonValue {
  const value = op[key];
  if (value === undefined) throw ApiError.badRequest(`json patch operation "${String(op['op'])}" needs "${key}"`);
  return value;
}

function pointer(text: string): string[] {
  if (text === '') return [];
  if (!text.startsWith('/')) throw ApiError.badRequest(`invalid json pointer: ${text}`);
  return text.slice(1).split('/').map((t) => t.replaceAll('~1', '/').replaceAll('~0', '~'));
}

function missing(path: string[]): ApiError {
  return new ApiError(422, 'Invalid', `the server rejected our request due to an error in our request: doc is missing path: "/${path.join('/')}"`);
}

function get(doc: JsonValue, path: string[]): JsonValue {
  let current: JsonValue = doc;
  for (const token of path) {
    if (Array.isArray(current)) {
      const value: JsonValue | undefined = current[Number(token)];
      if (!/^\d+$/.test(token) || value === undefined) throw missing(path);
      current = value;
    } else if (isObject(current) && Object.hasOwn(current, token)) {
      current = current[token] ?? null;
    } else {
      throw missing(path);
    }
  }
  return current;
}

function insert(doc: JsonValue, path: string[], value: JsonValue): JsonValue {
  if (path.length === 0) return jsonClone(value);
  const parent = get(doc, path.slice(0, -1));
  const last = path[path.length - 1] ?? '';
  if (Array.isArray(parent)) {
    const index = last === '-' ? parent.length : Number(last);
    if (!Number.isInteger(index) || index < 0 || index > parent.length) throw missing(path);
    parent.splice(index, 0, jsonClone(value));
  } else if (isObject(parent)) {
    parent[last] = jsonClone(value);
  } else {
    throw missing(path);
  }
  return doc;
}

function removeAt(doc: JsonValue, path: string[]): { doc: JsonValue; value: JsonValue } {
  const value = get(doc, path);
  const parent = get(doc, path.slice(0, -1));
  const last = path[path.length - 1] ?? '';
  if (Array.isArray(parent)) parent.splice(Number(last), 1);
  else if (isObject(parent)) delete parent[last];
  return { doc, value };
}
