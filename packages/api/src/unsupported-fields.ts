// findUnsupportedFields: the paths in a raw VMI that podvirt does not implement, e.g.
// `spec.domain.devices.gpus[0]`, so the user hears which field to remove instead of getting a
// VM that silently lacks it.

import type { FieldError } from './field-error.js';
import { SUPPORTED_VMI_FIELDS, type FieldTree } from './supported-fields.js';
import { fieldPath, indexPath, isRawObject } from './validate-context.js';

/**
 * Values Go's `omitempty` drops — null, false, 0, "" and [] — mean "not set", so a manifest
 * written out by Go tooling with `"gpus": null` or `"dedicatedCpuPlacement": false` passes.
 * An empty object does count: `slirp: {}` selects a binding by its mere presence.
 */
function isUnset(value: unknown): boolean {
  if (Array.isArray(value)) return value.length === 0;
  return value === null || value === undefined || value === false || value === 0 || value === '';
}

const PLAIN_KEY_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** `requests.memory`, but `requests[nvidia.com/gpu]` for keys that are not identifiers. */
export function keyPath(parent: string, key: string): string {
  return PLAIN_KEY_RE.test(key) ? fieldPath(parent, key) : `${parent}[${key}]`;
}

function unsupported(field: string): FieldError {
  return { field, type: 'NotSupported', message: 'podvirt does not support this field; remove it to run this VMI here' };
}

function walk(value: unknown, tree: FieldTree, path: string, out: FieldError[]): void {
  if (tree === 'any' || tree === true) return;
  if (Array.isArray(value)) {
    value.forEach((item: unknown, i) => walk(item, tree, indexPath(path, i), out));
    return;
  }
  // A wrong JSON type under a supported key is validateVmi's to report.
  if (!isRawObject(value)) return;
  for (const [key, child] of Object.entries(value)) {
    if (isUnset(child)) continue;
    const childPath = keyPath(path, key);
    const childTree = Object.hasOwn(tree, key) ? tree[key] : undefined;
    if (childTree === undefined) {
      // Name the first element of a list (`gpus[0]`): that is where the thing begins.
      out.push(unsupported(Array.isArray(child) ? indexPath(childPath, 0) : childPath));
      continue;
    }
    walk(child, childTree, childPath, out);
  }
}

/** Every set field of `raw` outside the allow-list, as NotSupported errors, in document order. */
export function findUnsupportedFields(raw: unknown, supported: FieldTree = SUPPORTED_VMI_FIELDS): FieldError[] {
  const out: FieldError[] = [];
  walk(raw, supported, '', out);
  return out;
}
