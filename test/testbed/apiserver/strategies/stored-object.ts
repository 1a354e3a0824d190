// Kinds the testbed mostly stores, so that install manifests apply (`kubectl apply
// --dry-run=server` included): RBAC objects, service accounts, admission configuration. The
// testbed authorizes every request; RBAC objects answer only admission's CEL `authorizer`, and
// admission policies and webhooks have their own checks (`../admission/`).
import type { StatusCause } from '../errors.js';
import { ageOf } from '../human-duration.js';
import { meta, str, type JsonObject } from '../json.js';
import { validateObjectMeta, type NameRule } from '../object-meta.js';
import type { Strategy } from '../resource-type.js';
import { column } from './columns.js';

/** Name/Age printing and metadata checks; `check` adds kind-specific field errors. */
export function storedObjectStrategy(nameRule: NameRule, check?: (obj: JsonObject) => StatusCause[]): Strategy {
  return {
    prepareForCreate() {},
    validate: (obj) => [...validateObjectMeta(obj, nameRule), ...(check?.(obj) ?? [])],
    fields: () => ({}),
    table: {
      columns: [column('Name', 0, 'string', 'name'), column('Age')],
      cells: (obj, now) => [str(meta(obj)['name']) ?? '', ageOf(meta(obj)['creationTimestamp'], now)],
    },
  };
}
