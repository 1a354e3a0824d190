// DaemonSets and Deployments, stored only: no controller turns them into pods here. They get
// the checks kube-apiserver makes that a manifest author most often trips on — a selector that
// matches the template's labels and a valid pod template.
import type { StatusCause } from '../errors.js';
import { ageOf } from '../human-duration.js';
import { meta, obj, str, type JsonObject } from '../json.js';
import { validateObjectMeta } from '../object-meta.js';
import type { Strategy } from '../resource-type.js';
import { column } from './columns.js';
import { validatePodSpec } from './pod-spec-validation.js';

function validateWorkload(workload: JsonObject): StatusCause[] {
  const causes = validateObjectMeta(workload, 'subdomain');
  const spec = obj(workload['spec']);
  const template = obj(spec?.['template']);
  if (spec === undefined || template === undefined) return [...causes, { reason: 'FieldValueRequired', message: 'Required value', field: 'spec.template' }];
  const matchLabels = obj(obj(spec['selector'])?.['matchLabels']);
  const labels = obj(obj(template['metadata'])?.['labels']) ?? {};
  if (matchLabels === undefined || Object.keys(matchLabels).length === 0) {
    causes.push({ reason: 'FieldValueRequired', message: 'Required value', field: 'spec.selector' });
  } else if (Object.entries(matchLabels).some(([k, v]) => labels[k] !== v)) {
    causes.push({ reason: 'FieldValueInvalid', message: 'Invalid value: `selector` does not match template `labels`', field: 'spec.template.metadata.labels' });
  }
  for (const cause of validatePodSpec(obj(template['spec']))) causes.push({ ...cause, field: `spec.template.${cause.field ?? 'spec'}` });
  return causes;
}

export const workloadStrategy: Strategy = {
  prepareForCreate(workload) {
    workload['status'] = {};
  },
  validate: (workload) => validateWorkload(workload),
  fields: () => ({}),
  table: {
    columns: [column('Name', 0, 'string', 'name'), column('Age')],
    cells: (w, now) => [str(meta(w)['name']) ?? '', ageOf(meta(w)['creationTimestamp'], now)],
  },
};
