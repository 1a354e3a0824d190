import { ApiError } from './errors.js';

type Operator = '=' | '!=' | 'in' | 'notin' | 'exists' | '!exists';

interface Requirement {
  key: string;
  op: Operator;
  values: string[];
}

/** A parsed label or field selector; an empty selector matches everything. */
export interface Selector {
  matches(values: Readonly<Record<string, string>>): boolean;
  keys(): string[];
}

/** Label selectors: `a=b`, `a==b`, `a!=b`, `a in (x,y)`, `a notin (x)`, `a`, `!a`. */
export function parseLabelSelector(text: string | undefined): Selector {
  const requirements = splitTopLevel(text ?? '').map(parseLabelRequirement);
  return selectorOf(requirements);
}

/** Field selectors only know `=`, `==` and `!=`; `supported` names the field labels of the kind. */
export function parseFieldSelector(text: string | undefined, supported: ReadonlySet<string>): Selector {
  const requirements = splitTopLevel(text ?? '').map((part): Requirement => {
    const match = /^([^=!]+?)\s*(==|=|!=)\s*(.*)$/.exec(part);
    if (match === null) throw ApiError.badRequest(`invalid selector: '${text ?? ''}'; can't understand '${part}'`);
    const [, key = '', op = '=', value = ''] = match;
    if (!supported.has(key)) throw ApiError.badRequest(`field label not supported: ${key}`);
    return { key, op: op === '!=' ? '!=' : '=', values: [value] };
  });
  return selectorOf(requirements);
}

function selectorOf(requirements: Requirement[]): Selector {
  return {
    matches: (values) => requirements.every((r) => matchOne(r, values)),
    keys: () => requirements.map((r) => r.key),
  };
}

function matchOne(r: Requirement, values: Readonly<Record<string, string>>): boolean {
  const has = Object.hasOwn(values, r.key);
  const value = values[r.key];
  switch (r.op) {
    case '=':
    case 'in':
      return has && r.values.includes(value ?? '');
    case '!=':
    case 'notin':
      return !has || !r.values.includes(value ?? '');
    case 'exists':
      return has;
    case '!exists':
      return !has;
  }
}

function parseLabelRequirement(part: string): Requirement {
  const setMatch = /^([^\s!=]+)\s+(in|notin)\s*\(([^)]*)\)$/.exec(part);
  if (setMatch !== null) {
    const [, key = '', op = 'in', list = ''] = setMatch;
    const values = list.split(',').map((v) => v.trim()).filter((v) => v !== '');
    return { key: checkKey(key), op: op === 'in' ? 'in' : 'notin', values };
  }
  const eqMatch = /^([^\s!=]+)\s*(==|=|!=)\s*([^\s]*)$/.exec(part);
  if (eqMatch !== null) {
    const [, key = '', op = '=', value = ''] = eqMatch;
    return { key: checkKey(key), op: op === '!=' ? '!=' : '=', values: [checkValue(value)] };
  }
  const notExists = /^!\s*([^\s!=()]+)$/.exec(part);
  if (notExists !== null) return { key: checkKey(notExists[1] ?? ''), op: '!exists', values: [] };
  if (/^[^\s!=()]+$/.test(part)) return { key: checkKey(part), op: 'exists', values: [] };
  throw ApiError.badRequest(`unable to parse requirement: ${part}`);
}

const qualifiedName = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const labelValue = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

function checkKey(key: string): string {
  if (!qualifiedName.test(key)) throw ApiError.badRequest(`unable to parse requirement: invalid label key "${key}"`);
  return key;
}

function checkValue(value: string): string {
  if (!labelValue.test(value)) throw ApiError.badRequest(`unable to parse requirement: invalid label value: "${value}"`);
  return value;
}

/** Splits on commas that are not inside `in (...)` lists. */
function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = '';
  for (const ch of text) {
    if (ch === '(') depth += 1;
    if (ch === ')') depth -= 1;
    if (ch === ',' && depth === 0) {
      parts.push(current);
      current = '';
    } else {
      current += ch;
    }
  }
  parts.push(current);
  return parts.map((p) => p.trim()).filter((p) => p !== '');
}
