// The error decodeVmi throws: every field error, kept structured for callers that turn them
// into a condition, an Event or a gRPC INVALID_ARGUMENT.

import { formatFieldErrors, type FieldError } from './field-error.js';

export class VmiInvalidError extends Error {
  readonly code = 'PODVIRT_ERR_VMI_INVALID';
  readonly fieldErrors: readonly FieldError[];

  constructor(fieldErrors: readonly FieldError[], options?: { cause?: unknown }) {
    super(`invalid VirtualMachineInstance: ${formatFieldErrors(fieldErrors)}`, options);
    this.name = 'VmiInvalidError';
    this.fieldErrors = fieldErrors;
  }
}
