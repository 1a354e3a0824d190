// metadata: the ObjectMeta fields podvirt reads, checked the way an API server would.

import {
  DNS_LABEL_RULE,
  fieldPath,
  indexPath,
  isDnsLabel,
  isDnsSubdomain,
  type RawObject,
  type Validation,
} from './validate-context.js';

const DNS_SUBDOMAIN_RULE = 'lowercase letters, digits, "-" and ".", starting and ending alphanumeric, at most 253 characters';

function validateOwnerReferences(v: Validation, path: string, value: unknown): void {
  const refs = v.array(path, value);
  refs?.forEach((item, i) => {
    const at = indexPath(path, i);
    const ref = v.object(at, item, true);
    if (!ref) return;
    for (const key of ['apiVersion', 'kind', 'name', 'uid']) v.string(fieldPath(at, key), ref[key], true);
    v.boolean(fieldPath(at, 'controller'), ref['controller']);
    v.boolean(fieldPath(at, 'blockOwnerDeletion'), ref['blockOwnerDeletion']);
  });
}

export function validateMetadata(v: Validation, metadata: RawObject): void {
  const at = (key: string): string => fieldPath('metadata', key);
  const generateName = v.string(at('generateName'), metadata['generateName']);
  const name = v.string(at('name'), metadata['name']);
  if (name === undefined || name === '') {
    if (!generateName) v.required(at('name'), 'a name (or metadata.generateName)');
  } else if (!isDnsSubdomain(name)) {
    v.add(at('name'), 'Invalid', `${JSON.stringify(name)} is not a valid name: use ${DNS_SUBDOMAIN_RULE}`);
  }
  const namespace = v.string(at('namespace'), metadata['namespace']);
  if (namespace !== undefined && namespace !== '' && !isDnsLabel(namespace)) {
    v.add(at('namespace'), 'Invalid', `${JSON.stringify(namespace)} is not a valid namespace: it must be ${DNS_LABEL_RULE}`);
  }
  for (const key of ['uid', 'resourceVersion', 'creationTimestamp', 'deletionTimestamp']) {
    v.string(at(key), metadata[key]);
  }
  v.integer(at('generation'), metadata['generation'], 0);
  v.integer(at('deletionGracePeriodSeconds'), metadata['deletionGracePeriodSeconds'], 0);
  v.stringMap(at('labels'), metadata['labels']);
  v.stringMap(at('annotations'), metadata['annotations']);
  v.array(at('finalizers'), metadata['finalizers'])?.forEach((item, i) => {
    v.string(indexPath(at('finalizers'), i), item, true);
  });
  validateOwnerReferences(v, at('ownerReferences'), metadata['ownerReferences']);
}
