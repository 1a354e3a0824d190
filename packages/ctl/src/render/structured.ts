import { stringify } from 'yaml';

// -o json / -o yaml: the response message as decoded, camelCase keys in the order of the proto
// fields, every field present (defaults included) so that scripts need not guess.
export function renderStructured(value: unknown, format: 'json' | 'yaml'): string {
  if (format === 'json') return `${JSON.stringify(value, null, 2)}\n`;
  return stringify(value);
}
