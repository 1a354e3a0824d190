// JSON value helpers shared by the API server: every stored object is plain JSON (no Dates, no
// class instances); copies and comparisons are @podvirt/api's jsonClone and jsonEqual.
export type JsonValue = string | number | boolean | null | JsonValue[] | JsonObject;
export interface JsonObject {
  [key: string]: JsonValue;
}

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The object's `metadata`, created when absent so callers can assign into it. */
export function meta(obj: JsonObject): JsonObject {
  const current = obj['metadata'];
  if (isObject(current)) return current;
  const created: JsonObject = {};
  obj['metadata'] = created;
  return created;
}

export function str(value: JsonValue | undefined): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

export function obj(value: JsonValue | undefined): JsonObject | undefined {
  return isObject(value) ? value : undefined;
}

export function arr(value: JsonValue | undefined): JsonValue[] {
  return Array.isArray(value) ? value : [];
}

