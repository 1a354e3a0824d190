// The required fields kube-apiserver checks on RBAC objects: a binding names its role and
// subjects, a rule names verbs and what they apply to.
import type { StatusCause } from '../errors.js';
import { arr, isObject, obj, str, type JsonObject } from '../json.js';

const ROLE_KINDS = ['Role', 'ClusterRole'];

export function checkRules(role: JsonObject): StatusCause[] {
  const causes: StatusCause[] = [];
  arr(role['rules']).forEach((rule, i) => {
    const at = `rules[${i}]`;
    if (!isObject(rule)) {
      causes.push(required(at));
      return;
    }
    if (arr(rule['verbs']).length === 0) causes.push(required(`${at}.verbs`));
    const targets = arr(rule['resources']).length + arr(rule['nonResourceURLs']).length;
    if (targets === 0) causes.push(required(`${at}.resources`));
    if (arr(rule['resources']).length > 0 && arr(rule['apiGroups']).length === 0) causes.push(required(`${at}.apiGroups`));
  });
  return causes;
}

export function checkBinding(binding: JsonObject): StatusCause[] {
  const causes: StatusCause[] = [];
  const roleRef = obj(binding['roleRef']);
  if (roleRef === undefined || (str(roleRef['name']) ?? '') === '') causes.push(required('roleRef.name'));
  else if (!ROLE_KINDS.includes(str(roleRef['kind']) ?? '')) {
    causes.push({ reason: 'FieldValueNotSupported', message: `Unsupported value: ${JSON.stringify(roleRef['kind'])}`, field: 'roleRef.kind' });
  }
  arr(binding['subjects']).forEach((s, i) => {
    if (!isObject(s) || (str(s['name']) ?? '') === '') causes.push(required(`subjects[${i}].name`));
    else if (s['kind'] === 'ServiceAccount' && (str(s['namespace']) ?? '') === '') causes.push(required(`subjects[${i}].namespace`));
  });
  return causes;
}

function required(field: string): StatusCause {
  return { reason: 'FieldValueRequired', message: 'Required value', field };
}
