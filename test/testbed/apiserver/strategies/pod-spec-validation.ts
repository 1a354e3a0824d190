import type { StatusCause } from '../errors.js';
import { arr, isObject, str, type JsonObject } from '../json.js';

const dnsLabel = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const restartPolicies = ['Always', 'OnFailure', 'Never'];

/** The basic pod checks kube-apiserver makes: containers present, named, with images; volumes known. */
export function validatePodSpec(spec: JsonObject | undefined): StatusCause[] {
  if (spec === undefined) return [{ reason: 'FieldValueRequired', message: 'Required value', field: 'spec' }];
  const causes: StatusCause[] = [];
  const volumes = new Set<string>();
  arr(spec['volumes']).forEach((v, i) => {
    const name = isObject(v) ? str(v['name']) : undefined;
    if (name === undefined || name === '') causes.push(required(`spec.volumes[${i}].name`));
    else if (volumes.has(name)) causes.push(duplicate(`spec.volumes[${i}].name`, name));
    else volumes.add(name);
  });
  const containers = arr(spec['containers']);
  if (containers.length === 0) causes.push(required('spec.containers'));
  const names = new Set<string>();
  for (const field of ['initContainers', 'containers']) {
    arr(spec[field]).forEach((c, i) => causes.push(...validateContainer(c, `spec.${field}[${i}]`, names, volumes)));
  }
  const policy = spec['restartPolicy'];
  if (typeof policy === 'string' && !restartPolicies.includes(policy)) {
    causes.push({
      reason: 'FieldValueNotSupported',
      message: `Unsupported value: "${policy}": supported values: ${restartPolicies.map((p) => `"${p}"`).join(', ')}`,
      field: 'spec.restartPolicy',
    });
  }
  return causes;
}

function validateContainer(c: unknown, path: string, names: Set<string>, volumes: Set<string>): StatusCause[] {
  if (!isObject(c)) return [required(path)];
  const causes: StatusCause[] = [];
  const name = str(c['name']);
  if (name === undefined || name === '') causes.push(required(`${path}.name`));
  else if (!dnsLabel.test(name)) {
    causes.push({
      reason: 'FieldValueInvalid',
      message: `Invalid value: "${name}": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`,
      field: `${path}.name`,
    });
  } else if (names.has(name)) causes.push(duplicate(`${path}.name`, name));
  else names.add(name);
  const image = str(c['image']);
  if (image === undefined || image.trim() === '') causes.push(required(`${path}.image`));
  arr(c['volumeMounts']).forEach((m, i) => {
    const volume = isObject(m) ? str(m['name']) : undefined;
    if (volume === undefined || !volumes.has(volume)) {
      causes.push({ reason: 'FieldValueNotFound', message: `Not found: "${volume ?? ''}"`, field: `${path}.volumeMounts[${i}].name` });
    }
    if (!isObject(m) || str(m['mountPath']) === undefined) causes.push(required(`${path}.volumeMounts[${i}].mountPath`));
  });
  return causes;
}

function required(field: string): StatusCause {
  return { reason: 'FieldValueRequired', message: 'Required value', field };
}

function duplicate(field: string, value: string): StatusCause {
  return { reason: 'FieldValueDuplicate', message: `Duplicate value: "${value}"`, field };
}
