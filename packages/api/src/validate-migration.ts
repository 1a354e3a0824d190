// A VirtualMachineInstanceMigration as a user wrote it, checked before the controller acts on
// it: spec.vmiName names a VMI, and the KubeVirt fields podvirt does not implement are refused
// by name instead of being ignored.

import type { FieldError } from './field-error.js';
import { MIGRATION_API_VERSION, MIGRATION_KIND } from './migration-kind.js';
import type { VirtualMachineInstanceMigration } from './types/migration.js';
import { describe, isAbsent, isDnsSubdomain, isRawObject } from './validate-context.js';

const SUPPORTED_SPEC_FIELDS: ReadonlySet<string> = new Set(['vmiName']);

/** Every problem of `raw` as a migration podvirt can run; empty when there is none. */
export function validateMigration(raw: unknown): FieldError[] {
  if (!isRawObject(raw)) return [{ field: '', type: 'TypeInvalid', message: `a migration is an object, not ${describe(raw)}` }];
  const errors: FieldError[] = [];
  if (raw['apiVersion'] !== MIGRATION_API_VERSION) {
    errors.push({ field: 'apiVersion', type: 'NotSupported', message: `${describe(raw['apiVersion'])}: supported value: "${MIGRATION_API_VERSION}"` });
  }
  if (raw['kind'] !== MIGRATION_KIND) {
    errors.push({ field: 'kind', type: 'NotSupported', message: `${describe(raw['kind'])}: supported value: "${MIGRATION_KIND}"` });
  }
  const spec = raw['spec'];
  if (!isRawObject(spec)) {
    errors.push({ field: 'spec', type: isAbsent(spec) ? 'Required' : 'TypeInvalid', message: isAbsent(spec) ? 'spec is required' : `spec is an object, not ${describe(spec)}` });
    return errors;
  }
  const vmiName = spec['vmiName'];
  if (isAbsent(vmiName) || vmiName === '') {
    errors.push({ field: 'spec.vmiName', type: 'Required', message: 'the name of the VMI to migrate is required' });
  } else if (typeof vmiName !== 'string' || !isDnsSubdomain(vmiName)) {
    errors.push({ field: 'spec.vmiName', type: 'Invalid', message: `${describe(vmiName)} is not a VMI name (a DNS subdomain)` });
  }
  for (const key of Object.keys(spec)) {
    if (SUPPORTED_SPEC_FIELDS.has(key) || isAbsent(spec[key])) continue;
    errors.push({ field: `spec.${key}`, type: 'NotSupported', message: 'podvirt does not support this field; remove it to run this migration here' });
  }
  return errors;
}

/** The migration typed, when validateMigration found nothing wrong with it. */
export function asMigration(raw: unknown): VirtualMachineInstanceMigration | undefined {
  return validateMigration(raw).length === 0 ? (raw as VirtualMachineInstanceMigration) : undefined;
}
