// Equality of two JSON values as the API server stores them: key order does not matter, a
// property set to undefined is no property, and an undefined array element is null. A status
// computed here and the same status read back (keys in the server's order) compare equal. One
// walk over both values, nothing serialised: the handler and the controller run it on every
// status they compute.

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
