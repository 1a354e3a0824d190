import type { StatusCause } from './errors.js';
import { isObject, type JsonObject, type JsonValue } from './json.js';

/** The OpenAPI v3 subset a structural CRD schema may use and this server checks. */
export interface SchemaNode {
  type?: string;
  properties?: Record<string, SchemaNode>;
  items?: SchemaNode;
  additionalProperties?: SchemaNode | boolean;
  required?: string[];
  enum?: JsonValue[];
  pattern?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  nullable?: boolean;
  anyOf?: SchemaNode[];
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
}

const rootFields = new Set(['apiVersion', 'kind', 'metadata']);

/**
 * Pruning, as kube-apiserver does for structural schemas: fields the schema does not declare
 * are dropped unless a `x-kubernetes-preserve-unknown-fields` covers them. `metadata` is
 * left to the generic ObjectMeta handling.
 */
export function prune(value: JsonValue, schema: SchemaNode, root = true): void {
  if (Array.isArray(value)) {
    if (schema.items !== undefined) for (const item of value) prune(item, schema.items, false);
    return;
  }
  if (!isObject(value)) return;
  const properties = schema.properties ?? {};
  const additional = schema.additionalProperties;
  for (const [key, child] of Object.entries(value)) {
    if (root && rootFields.has(key)) continue;
    const childSchema = properties[key] ?? (isObject(additional) ? (additional as SchemaNode) : undefined);
    if (childSchema !== undefined) prune(child, childSchema, false);
    else if (schema['x-kubernetes-preserve-unknown-fields'] !== true && additional !== true) delete value[key];
  }
}

/** Validates `value` against `schema`, returning causes with dotted field paths. */
export function validateSchema(value: JsonValue, schema: SchemaNode, path = '', root = true): StatusCause[] {
  if (value === null) {
    return schema.nullable === true || schema.type === undefined ? [] : [typeError(path, value, schema.type)];
  }
  const typeProblem = checkType(value, schema, path);
  if (typeProblem !== undefined) return [typeProblem];
  const causes: StatusCause[] = [...checkScalar(value, schema, path)];
  if (Array.isArray(value) && schema.items !== undefined) {
    value.forEach((item, i) => causes.push(...validateSchema(item, schema.items as SchemaNode, `${path}[${i}]`, false)));
  }
  if (isObject(value)) causes.push(...checkObject(value, schema, path, root));
  return causes;
}

function checkObject(value: JsonObject, schema: SchemaNode, path: string, root: boolean): StatusCause[] {
  const causes: StatusCause[] = [];
  for (const name of schema.required ?? []) {
    if (!Object.hasOwn(value, name)) causes.push({ reason: 'FieldValueRequired', message: 'Required value', field: join(path, name) });
  }
  const additional = schema.additionalProperties;
  for (const [key, child] of Object.entries(value)) {
    if (root && rootFields.has(key)) continue;
    const childSchema = schema.properties?.[key] ?? (isObject(additional) ? (additional as SchemaNode) : undefined);
    if (childSchema !== undefined) causes.push(...validateSchema(child, childSchema, join(path, key), false));
  }
  return causes;
}

function checkType(value: JsonValue, schema: SchemaNode, path: string): StatusCause | undefined {
  const actual = typeName(value);
  if (schema['x-kubernetes-int-or-string'] === true) {
    return actual === 'integer' || actual === 'string' ? undefined : typeError(path, value, 'integer,string');
  }
  const expected = schema.type;
  if (expected === undefined) return undefined;
  if (expected === actual || (expected === 'number' && actual === 'integer')) return undefined;
  return typeError(path, value, expected);
}

function checkScalar(value: JsonValue, schema: SchemaNode, path: string): StatusCause[] {
  const causes: StatusCause[] = [];
  if (schema.enum !== undefined && !schema.enum.some((e) => e === value)) {
    const supported = schema.enum.map((e) => JSON.stringify(e)).join(', ');
    causes.push({ reason: 'FieldValueNotSupported', message: `Unsupported value: ${JSON.stringify(value)}: supported values: ${supported}`, field: path });
  }
  if (typeof value === 'string') {
    if (schema.pattern !== undefined && !new RegExp(schema.pattern, 'u').test(value)) {
      causes.push(invalid(path, value, `should match '${schema.pattern}'`));
    }
    if (schema.maxLength !== undefined && value.length > schema.maxLength) {
      causes.push({ reason: 'FieldValueTooLong', message: `Too long: may not be more than ${schema.maxLength} bytes`, field: path });
    }
    if (schema.minLength !== undefined && value.length < schema.minLength) {
      causes.push(invalid(path, value, `should be at least ${schema.minLength} chars long`));
    }
  }
  if (typeof value === 'number') {
    if (schema.minimum !== undefined && value < schema.minimum) {
      causes.push(invalid(path, value, `should be greater than or equal to ${schema.minimum}`));
    }
    if (schema.maximum !== undefined && value > schema.maximum) {
      causes.push(invalid(path, value, `should be less than or equal to ${schema.maximum}`));
    }
  }
  return causes;
}

function typeName(value: JsonValue): string {
  if (Array.isArray(value)) return 'array';
  if (value === null) return 'null';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function typeError(path: string, value: JsonValue, expected: string): StatusCause {
  const actual = typeName(value);
  return {
    reason: 'FieldValueTypeInvalid',
    message: `Invalid value: "${actual}": ${path} in body must be of type ${expected}: "${actual}"`,
    field: path,
  };
}

function invalid(path: string, value: JsonValue, why: string): StatusCause {
  return { reason: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(value)}: ${path} in body ${why}`, field: path };
}

function join(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}
