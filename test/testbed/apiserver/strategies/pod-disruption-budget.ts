// PodDisruptionBudgets (policy/v1): the checks kube-apiserver makes and `kubectl get pdb`'s
// columns. Their status is the disruption controller's (disruption-controller.ts) and the
// eviction subresource's (eviction.ts).
import type { StatusCause } from '../errors.js';
import { ageOf } from '../human-duration.js';
import { meta, obj, str, type JsonObject, type JsonValue } from '../json.js';
import { validateObjectMeta } from '../object-meta.js';
import type { Strategy } from '../resource-type.js';
import { column } from './columns.js';

function checkIntOrPercent(value: JsonValue | undefined, field: string): StatusCause[] {
  if (value === undefined || value === null) return [];
  if (typeof value === 'number') {
    return Number.isInteger(value) && value >= 0 ? [] : [{ reason: 'FieldValueInvalid', message: `Invalid value: ${value}: must be greater than or equal to 0`, field }];
  }
  if (typeof value === 'string') {
    const m = /^([0-9]+)%$/.exec(value);
    if (m === null) return [{ reason: 'FieldValueInvalid', message: `Invalid value: "${value}": a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')`, field }];
    return Number(m[1]) <= 100 ? [] : [{ reason: 'FieldValueInvalid', message: `Invalid value: "${value}": must not be greater than 100%`, field }];
  }
  return [{ reason: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(value)}: must be an integer or percentage (e.g '5%')`, field }];
}

function validate(pdb: JsonObject): StatusCause[] {
  const causes = validateObjectMeta(pdb, 'subdomain');
  const spec = obj(pdb['spec']) ?? {};
  if (spec['minAvailable'] !== undefined && spec['maxUnavailable'] !== undefined) {
    causes.push({ reason: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(spec)}: minAvailable and maxUnavailable cannot be both set`, field: 'spec' });
  }
  causes.push(...checkIntOrPercent(spec['minAvailable'], 'spec.minAvailable'), ...checkIntOrPercent(spec['maxUnavailable'], 'spec.maxUnavailable'));
  const policy = spec['unhealthyPodEvictionPolicy'];
  if (policy !== undefined && policy !== 'IfHealthyBudget' && policy !== 'AlwaysAllow') {
    causes.push({ reason: 'FieldValueNotSupported', message: `Unsupported value: ${JSON.stringify(policy)}: supported values: "AlwaysAllow", "IfHealthyBudget"`, field: 'spec.unhealthyPodEvictionPolicy' });
  }
  return causes;
}

const shown = (v: JsonValue | undefined): string => (v === undefined || v === null ? 'N/A' : String(v));

export const podDisruptionBudgetStrategy: Strategy = {
  prepareForCreate(pdb) {
    pdb['status'] = { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 };
  },
  validate: (pdb) => validate(pdb),
  fields: () => ({}),
  table: {
    columns: [column('Name', 0, 'string', 'name'), column('Min Available'), column('Max Unavailable'), column('Allowed Disruptions', 0, 'integer'), column('Age')],
    cells: (pdb, now) => {
      const spec = obj(pdb['spec']) ?? {};
      const status = obj(pdb['status']) ?? {};
      return [str(meta(pdb)['name']) ?? '', shown(spec['minAvailable']), shown(spec['maxUnavailable']), status['disruptionsAllowed'] ?? 0, ageOf(meta(pdb)['creationTimestamp'], now)];
    },
  },
};
