import { isObject, type JsonValue } from './json.js';

/**
 * The JSONPath subset CRD printer columns use: `.a.b`, `.a[0].b` and filters such as
 * `.status.conditions[?(@.type=='Ready')].status`. Returns every match.
 */
export function evaluateJsonPath(root: JsonValue, path: string): JsonValue[] {
  let current: JsonValue[] = [root];
  const steps = path.trim().replace(/^\{|\}$/g, '').match(/\.[^.[]+|\[[^\]]*\]/g) ?? [];
  for (const step of steps) {
    current = current.flatMap((value) => applyStep(value, step));
  }
  return current;
}

function applyStep(value: JsonValue, step: string): JsonValue[] {
  if (step.startsWith('.')) {
    const key = step.slice(1);
    return isObject(value) && value[key] !== undefined ? [value[key] ?? null] : [];
  }
  if (!Array.isArray(value)) return [];
  const inner = step.slice(1, -1);
  if (inner === '*') return value;
  if (/^-?\d+$/.test(inner)) {
    const index = Number(inner);
    const item = value[index < 0 ? value.length + index : index];
    return item === undefined ? [] : [item];
  }
  const filter = /^\?\(@\.([\w.]+)\s*==\s*['"]([^'"]*)['"]\)$/.exec(inner);
  if (filter === null) return [];
  const [, field = '', wanted = ''] = filter;
  return value.filter((item) => evaluateJsonPath(item, `.${field}`)[0] === wanted);
}
