import { randomInt } from 'node:crypto';
import type { StatusCause } from './errors.js';
import { isObject, meta, str, type JsonObject } from './json.js';
import { validateAnnotations, validateLabels } from './metadata-maps.js';

const objectMetaFields = new Set([
  'name', 'generateName', 'namespace', 'selfLink', 'uid', 'resourceVersion', 'generation',
  'creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'labels', 'annotations',
  'ownerReferences', 'finalizers', 'managedFields',
]);

const subdomain = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const label = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
// The same alphabet Kubernetes uses for generateName suffixes (no vowels, no look-alikes).
const suffixAlphabet = 'bcdfghjklmnpqrstvwxz2456789';

/** Drops unknown ObjectMeta fields, as decoding into the Go type does. */
export function pruneObjectMeta(obj: JsonObject): void {
  const m = meta(obj);
  for (const key of Object.keys(m)) if (!objectMetaFields.has(key)) delete m[key];
}

export function generateNameSuffix(): string {
  let suffix = '';
  for (let i = 0; i < 5; i += 1) suffix += suffixAlphabet[randomInt(suffixAlphabet.length)] ?? 'x';
  return suffix;
}

export type NameRule = 'subdomain' | 'label' | 'path-segment';

/** Name and metadata checks that apply to every kind. */
export function validateObjectMeta(obj: JsonObject, rule: NameRule): StatusCause[] {
  const m = meta(obj);
  const name = str(m['name']);
  const causes: StatusCause[] = [];
  if (name === undefined || name === '') {
    causes.push({ reason: 'FieldValueRequired', message: 'Required value: name or generateName is required', field: 'metadata.name' });
  } else {
    const problem = nameProblem(name, rule);
    if (problem !== undefined) {
      causes.push({ reason: 'FieldValueInvalid', message: `Invalid value: "${name}": ${problem}`, field: 'metadata.name' });
    }
  }
  // kube-apiserver checks a generateName as a name prefix: its trailing dash masked, the rest a valid name.
  const generateName = str(m['generateName']);
  if (generateName !== undefined && generateName !== '') {
    const problem = nameProblem(generateName.endsWith('-') ? `${generateName.slice(0, -1)}a` : generateName, rule);
    if (problem !== undefined) causes.push({ reason: 'FieldValueInvalid', message: `Invalid value: "${generateName}": ${problem}`, field: 'metadata.generateName' });
  }
  for (const field of ['labels', 'annotations']) {
    const map = m[field];
    if (map === undefined || map === null) continue;
    if (!isObject(map) || Object.values(map).some((v) => typeof v !== 'string')) {
      causes.push({ reason: 'FieldValueInvalid', message: 'Invalid value: must be a map of strings', field: `metadata.${field}` });
      continue;
    }
    causes.push(...(field === 'labels' ? validateLabels(map) : validateAnnotations(map)));
  }
  return causes;
}

function nameProblem(name: string, rule: NameRule): string | undefined {
  if (rule === 'path-segment') {
    return name === '.' || name === '..' || /[/%]/.test(name) ? 'may not contain \'/\' or \'%\'' : undefined;
  }
  if (rule === 'label') {
    if (name.length > 63) return 'must be no more than 63 characters';
    return label.test(name)
      ? undefined
      : "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
  }
  if (name.length > 253) return 'must be no more than 253 characters';
  return subdomain.test(name)
    ? undefined
    : "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
}
