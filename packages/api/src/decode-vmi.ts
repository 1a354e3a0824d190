// decodeVmi: the one gate between JSON and the typed VMI. Validation and unsupported-field
// detection together; the typed object is returned only when both find nothing.

import type { FieldError } from './field-error.js';
import { findUnsupportedFields } from './unsupported-fields.js';
import type { FieldTree } from './supported-fields.js';
import type { VirtualMachineInstance } from './types/vmi.js';
import type { ValidateOptions } from './validate-options.js';
import { validateVmi } from './validate-vmi.js';
import { VmiInvalidError } from './vmi-invalid-error.js';

export interface DecodeOptions extends ValidateOptions {
  /** Allow-list to check against; SUPPORTED_VMI_FIELDS when unset. */
  readonly supportedFields?: FieldTree;
}

/** Unsupported fields first: "remove X" is the first thing to fix, and may explain the rest. */
export function checkVmi(raw: unknown, options: DecodeOptions = {}): FieldError[] {
  return [...findUnsupportedFields(raw, options.supportedFields), ...validateVmi(raw, options)];
}

/** Returns `raw` typed as a VMI, or throws VmiInvalidError listing every problem. */
export function decodeVmi(raw: unknown, options?: DecodeOptions): VirtualMachineInstance {
  const errors = checkVmi(raw, options);
  if (errors.length > 0) throw new VmiInvalidError(errors);
  return raw as VirtualMachineInstance;
}
