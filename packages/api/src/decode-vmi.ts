// decodeVmi: the one gate between JSON and the VMI every podvirt process reads. It validates,
// refuses unsupported fields, and applies the defaults; the result is typed DefaultedVmi, so a
// reader trusts it and repeats neither a check nor a default.

import { applyDefaults } from './defaults.js';
import type { DefaultsOptions } from './defaults-options.js';
import type { FieldError } from './field-error.js';
import { jsonDepthExcess } from './json-depth.js';
import type { FieldTree } from './supported-fields.js';
import type { DefaultedVmi } from './types/defaulted.js';
import type { VirtualMachineInstance } from './types/vmi.js';
import { findUnsupportedFields } from './unsupported-fields.js';
import type { ValidateOptions } from './validate-options.js';
import { validateVmi } from './validate-vmi.js';
import { VmiInvalidError } from './vmi-invalid-error.js';

export interface DecodeOptions extends ValidateOptions, DefaultsOptions {
  /** Allow-list to check against; SUPPORTED_VMI_FIELDS when unset. */
  readonly supportedFields?: FieldTree;
}

/**
 * No VirtualMachineInstance field nests more than about 15 levels (managedFields included);
 * deeper input is refused before any recursive walk could overflow the stack on it.
 */
export const MAX_VMI_DEPTH = 100;

/**
 * Too deep, alone (nothing else walks such a value); else unsupported fields first: "remove X"
 * is the first thing to fix, and may explain the rest.
 */
export function checkVmi(raw: unknown, options: DecodeOptions = {}): FieldError[] {
  const deep = jsonDepthExcess(raw, MAX_VMI_DEPTH);
  if (deep !== undefined) {
    return [{ field: deep.path, type: 'Invalid', message: `nests more than ${MAX_VMI_DEPTH} levels deep; no VirtualMachineInstance field comes near that` }];
  }
  return [...findUnsupportedFields(raw, options.supportedFields), ...validateVmi(raw, options)];
}

/**
 * Returns a defaulted copy of `raw` (never `raw` itself), or throws VmiInvalidError listing
 * every problem.
 */
export function decodeVmi(raw: unknown, options?: DecodeOptions): DefaultedVmi {
  const errors = checkVmi(raw, options);
  if (errors.length > 0) throw new VmiInvalidError(errors);
  return applyDefaults(raw as VirtualMachineInstance, options);
}
