import { ageOf } from '../human-duration.js';
import { meta, obj, str } from '../json.js';
import { validateObjectMeta } from '../object-meta.js';
import type { Strategy } from '../resource-type.js';
import { column } from './columns.js';

export const leaseStrategy: Strategy = {
  prepareForCreate() {},
  validate: (lease) => validateObjectMeta(lease, 'subdomain'),
  fields: () => ({}),
  table: {
    columns: [column('Name', 0, 'string', 'name'), column('Holder'), column('Age')],
    cells: (lease, now) => [
      str(meta(lease)['name']) ?? '',
      str(obj(lease['spec'])?.['holderIdentity']) ?? '',
      ageOf(meta(lease)['creationTimestamp'], now),
    ],
  },
};
