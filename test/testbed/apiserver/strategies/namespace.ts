import { ageOf } from '../human-duration.js';
import { meta, obj, str } from '../json.js';
import { validateObjectMeta } from '../object-meta.js';
import type { Strategy } from '../resource-type.js';
import { column } from './columns.js';

export const namespaceStrategy: Strategy = {
  defaults(ns) {
    const m = meta(ns);
    const labels = obj(m['labels']) ?? {};
    // Kubernetes labels every namespace with its own name so selectors can pick namespaces.
    labels['kubernetes.io/metadata.name'] = str(m['name']) ?? '';
    m['labels'] = labels;
    const spec = obj(ns['spec']) ?? {};
    spec['finalizers'] ??= ['kubernetes'];
    ns['spec'] = spec;
  },
  prepareForCreate(ns) {
    ns['status'] = { phase: 'Active' };
  },
  validate: (ns) => validateObjectMeta(ns, 'label'),
  fields: (ns) => ({ 'status.phase': str(obj(ns['status'])?.['phase']) ?? '' }),
  table: {
    columns: [column('Name', 0, 'string', 'name'), column('Status'), column('Age')],
    cells: (ns, now) => [
      str(meta(ns)['name']) ?? '',
      str(obj(ns['status'])?.['phase']) ?? '',
      ageOf(meta(ns)['creationTimestamp'], now),
    ],
  },
};

namespaceStrategy.holdDeletion = (ns) => {
  const spec = obj(ns['spec']) ?? {};
  const status = obj(ns['status']) ?? {};
  status['phase'] = 'Terminating';
  ns['status'] = status;
  return Array.isArray(spec['finalizers']) && spec['finalizers'].length > 0;
};
