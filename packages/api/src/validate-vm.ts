// A VirtualMachine as a user wrote it, checked before the controller acts on it: KubeVirt's
// spec.running / spec.runStrategy rule (one or the other, a known strategy), the fields podvirt
// does not implement refused by name, and the template's VMI through the one decode path
// (checkVmi), its errors named under spec.template.

import { checkVmi, type DecodeOptions } from './decode-vmi.js';
import type { FieldError } from './field-error.js';
import { VMI_ACCEPTED_API_VERSIONS } from './group-version.js';
import type { RunStrategy, VirtualMachine } from './types/vm.js';
import { describe, isAbsent, isRawObject } from './validate-context.js';
import { VM_KIND } from './vm-kind.js';
import { templateVmi } from './vm-template-vmi.js';

export const RUN_STRATEGIES: readonly RunStrategy[] = ['Always', 'RerunOnFailure', 'Manual', 'Halted', 'Once'];
const SUPPORTED_SPEC_FIELDS: ReadonlySet<string> = new Set(['running', 'runStrategy', 'template']);
const SUPPORTED_TEMPLATE_METADATA: ReadonlySet<string> = new Set(['labels', 'annotations', 'name', 'namespace', 'creationTimestamp']);

/** Every problem of `raw` as a VM podvirt can run; empty when there is none. */
export function validateVm(raw: unknown, options: DecodeOptions = {}): FieldError[] {
  if (!isRawObject(raw)) return [{ field: '', type: 'TypeInvalid', message: `a VirtualMachine is an object, not ${describe(raw)}` }];
  const errors: FieldError[] = [];
  if (typeof raw['apiVersion'] !== 'string' || !VMI_ACCEPTED_API_VERSIONS.includes(raw['apiVersion'])) {
    errors.push({ field: 'apiVersion', type: 'NotSupported', message: `${describe(raw['apiVersion'])}: accepted: ${VMI_ACCEPTED_API_VERSIONS.join(', ')}` });
  }
  if (raw['kind'] !== VM_KIND) errors.push({ field: 'kind', type: 'NotSupported', message: `${describe(raw['kind'])}: supported value: "${VM_KIND}"` });
  const spec = raw['spec'];
  if (!isRawObject(spec)) {
    errors.push({ field: 'spec', type: isAbsent(spec) ? 'Required' : 'TypeInvalid', message: isAbsent(spec) ? 'spec is required' : `spec is an object, not ${describe(spec)}` });
    return errors;
  }
  errors.push(...runStrategyErrors(spec));
  for (const key of Object.keys(spec)) {
    if (SUPPORTED_SPEC_FIELDS.has(key) || isAbsent(spec[key])) continue;
    errors.push({ field: `spec.${key}`, type: 'NotSupported', message: 'podvirt does not support this field; remove it to run this VM here' });
  }
  errors.push(...templateErrors(raw, spec['template'], options));
  return errors;
}

function runStrategyErrors(spec: Record<string, unknown>): FieldError[] {
  const errors: FieldError[] = [];
  const running = spec['running'];
  const strategy = spec['runStrategy'];
  if (!isAbsent(running) && typeof running !== 'boolean') errors.push({ field: 'spec.running', type: 'TypeInvalid', message: `${describe(running)} is not a boolean` });
  if (!isAbsent(strategy) && !RUN_STRATEGIES.includes(strategy as RunStrategy)) {
    errors.push({ field: 'spec.runStrategy', type: 'NotSupported', message: `${describe(strategy)}: supported values: ${RUN_STRATEGIES.map((s) => `"${s}"`).join(', ')}` });
  }
  if (!isAbsent(running) && !isAbsent(strategy)) {
    errors.push({ field: 'spec.running', type: 'Invalid', message: 'set either spec.running or spec.runStrategy, not both (runStrategy replaces running)' });
  }
  return errors;
}

function templateErrors(raw: Record<string, unknown>, template: unknown, options: DecodeOptions): FieldError[] {
  if (!isRawObject(template)) {
    return [{ field: 'spec.template', type: isAbsent(template) ? 'Required' : 'TypeInvalid', message: isAbsent(template) ? 'the VMI template is required' : `spec.template is an object, not ${describe(template)}` }];
  }
  const errors: FieldError[] = [];
  const metadata = template['metadata'];
  if (!isAbsent(metadata) && !isRawObject(metadata)) errors.push({ field: 'spec.template.metadata', type: 'TypeInvalid', message: `${describe(metadata)} is not an object` });
  if (isRawObject(metadata)) {
    for (const key of Object.keys(metadata)) {
      if (!SUPPORTED_TEMPLATE_METADATA.has(key) && !isAbsent(metadata[key])) {
        errors.push({ field: `spec.template.metadata.${key}`, type: 'NotSupported', message: 'only labels and annotations of the template are copied to the VMI; remove this field' });
      }
    }
  }
  if (!isRawObject(template['spec'])) {
    errors.push({ field: 'spec.template.spec', type: isAbsent(template['spec']) ? 'Required' : 'TypeInvalid', message: 'the template needs a VMI spec (spec.template.spec.domain …)' });
    return errors;
  }
  if (errors.length > 0) return errors;
  const metadataRaw = isRawObject(raw['metadata']) ? raw['metadata'] : {};
  const vmi = templateVmi({ ...(raw as unknown as VirtualMachine), metadata: { name: typeof metadataRaw['name'] === 'string' ? metadataRaw['name'] : 'vm', ...(typeof metadataRaw['namespace'] === 'string' ? { namespace: metadataRaw['namespace'] } : {}), uid: 'template' } });
  return checkVmi(vmi, options).map((e) => ({ ...e, field: templateField(e.field) }));
}

/** A VMI field path as the VM's user sees it: `spec.domain…` is `spec.template.spec.domain…`. */
function templateField(field: string): string {
  if (field.startsWith('spec.') || field === 'spec') return `spec.template.${field}`;
  if (field.startsWith('metadata.') || field === 'metadata') return `spec.template.${field}`;
  return field === '' ? 'spec.template' : `spec.template.${field}`;
}

/** The strategy the VM asks for: `runStrategy`, else `running` (true Always, false Halted), else Halted. */
export function runStrategyOf(vm: VirtualMachine): RunStrategy {
  if (vm.spec.runStrategy !== undefined) return vm.spec.runStrategy;
  return vm.spec.running === true ? 'Always' : 'Halted';
}
