// Shared machinery of the validators: an error list that knows the current JSON path, and
// readers that check a raw value's JSON type. Go's decoder treats `null` as "absent", so do we.

import { showInteger } from './exact-integers.js';
import type { FieldError, FieldErrorType } from './field-error.js';
import { parseQuantityValue, type Quantity } from './quantity.js';
import type { ValidateOptions } from './validate-options.js';

export type RawObject = Record<string, unknown>;

export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return `the string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
  if (typeof value === 'number' || typeof value === 'boolean') return `${typeof value} ${String(value)}`;
  return typeof value === 'object' ? 'an object' : typeof value;
}

export function isRawObject(value: unknown): value is RawObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function isAbsent(value: unknown): value is null | undefined {
  return value === undefined || value === null;
}

export class Validation {
  readonly errors: FieldError[] = [];
  readonly options: Required<ValidateOptions>;

  constructor(options: Required<ValidateOptions>) {
    this.options = options;
  }

  add(field: string, type: FieldErrorType, message: string): void {
    this.errors.push({ field, type, message });
  }

  required(field: string, what: string): void {
    this.add(field, 'Required', `${what} is required`);
  }

  /** The value as an object, or undefined when absent; a wrong JSON type is reported. */
  object(field: string, value: unknown, required = false): RawObject | undefined {
    if (isAbsent(value)) {
      if (required) this.required(field, 'an object');
      return undefined;
    }
    if (isRawObject(value)) return value;
    this.add(field, 'TypeInvalid', `must be an object, got ${describe(value)}`);
    return undefined;
  }

  array(field: string, value: unknown): unknown[] | undefined {
    if (isAbsent(value)) return undefined;
    if (Array.isArray(value)) return value;
    this.add(field, 'TypeInvalid', `must be a list, got ${describe(value)}`);
    return undefined;
  }

  string(field: string, value: unknown, required = false): string | undefined {
    if (isAbsent(value) || (required && value === '')) {
      if (required) this.required(field, 'a non-empty string');
      return undefined;
    }
    if (typeof value === 'string') return value;
    this.add(field, 'TypeInvalid', `must be a string, got ${describe(value)}`);
    return undefined;
  }

  boolean(field: string, value: unknown): boolean | undefined {
    if (isAbsent(value)) return undefined;
    if (typeof value === 'boolean') return value;
    this.add(field, 'TypeInvalid', `must be true or false, got ${describe(value)}`);
    return undefined;
  }

  /**
   * An integer within [min, max]; KubeVirt's Go types would reject fractions and overflow.
   * The value is shown as written, even past 2^53, and the bound it breaks is the one named.
   */
  integer(field: string, value: unknown, min: number, max = Number.MAX_SAFE_INTEGER): number | undefined {
    if (isAbsent(value)) return undefined;
    if (typeof value !== 'number' || !Number.isInteger(value)) {
      this.add(field, 'TypeInvalid', `must be an integer, got ${describe(value)}`);
      return undefined;
    }
    if (value < min || value > max) {
      const range = value < min ? `at least ${min}` : `at most ${max}`;
      this.add(field, 'Invalid', `must be ${range}, got ${showInteger(value, this.options.exactIntegers)}`);
      return undefined;
    }
    return value;
  }

  /** One of a fixed set of strings. */
  oneOf<T extends string>(field: string, value: unknown, accepted: readonly T[]): T | undefined {
    const text = this.string(field, value);
    if (text === undefined) return undefined;
    if ((accepted as readonly string[]).includes(text)) return text as T;
    this.add(field, 'NotSupported', `${JSON.stringify(text)} is not supported; accepted: ${accepted.join(', ')}`);
    return undefined;
  }

  /** A map of string to string, such as labels or a node selector. */
  stringMap(field: string, value: unknown): Record<string, string> | undefined {
    const map = this.object(field, value);
    if (!map) return undefined;
    for (const [key, entry] of Object.entries(map)) {
      if (key === '') this.add(field, 'Invalid', 'keys must not be empty');
      if (typeof entry !== 'string') this.add(`${field}[${key}]`, 'TypeInvalid', `must be a string, got ${describe(entry)}`);
    }
    return map as Record<string, string>;
  }

  /**
   * A quantity (string or JSON number). With `positive`, zero and negative values are refused,
   * as no size or count in a VMI can be.
   */
  quantity(field: string, value: unknown, positive = true): Quantity | undefined {
    if (isAbsent(value)) return undefined;
    if (typeof value !== 'string' && typeof value !== 'number') {
      this.add(field, 'TypeInvalid', `must be a quantity such as "128Mi" or "1", got ${describe(value)}`);
      return undefined;
    }
    let quantity: Quantity;
    try {
      quantity = parseQuantityValue(value);
    } catch (err) {
      this.add(field, 'Invalid', err instanceof Error ? err.message : String(err));
      return undefined;
    }
    if (positive && quantity.nanos <= 0n) {
      this.add(field, 'Invalid', `must be greater than zero, got ${JSON.stringify(value)}`);
      return undefined;
    }
    return quantity;
  }

  /** Names of the keys present (not null) among `keys`. */
  presentKeys(object: RawObject, keys: readonly string[]): string[] {
    return keys.filter((key) => !isAbsent(object[key]));
  }
}

export function fieldPath(parent: string, key: string): string {
  return parent === '' ? key : `${parent}.${key}`;
}

export function indexPath(parent: string, index: number): string {
  return `${parent}[${index}]`;
}

export const DNS_LABEL_RULE = 'a DNS label: lowercase letters, digits and "-", starting and ending alphanumeric, at most 63 characters';
const DNS_LABEL_RE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** RFC 1123 label: what Kubernetes requires of namespaces, and podvirt of disk and volume names. */
export function isDnsLabel(value: string): boolean {
  return value.length <= 63 && DNS_LABEL_RE.test(value);
}

/** RFC 1123 subdomain: what Kubernetes requires of object names. */
export function isDnsSubdomain(value: string): boolean {
  return value.length <= 253 && value.split('.').every((label) => label.length > 0 && DNS_LABEL_RE.test(label));
}

/** An absolute path without `..` segments: the launcher joins these under its own roots. */
export function isSafeAbsolutePath(value: string): boolean {
  return value.startsWith('/') && !value.split('/').includes('..') && !value.includes('\0');
}
