// The one error for an invalid VMI, in every process: decodeVmi throws it with every field
// error; the launcher throws it for what only it can see (an image file that is missing, a host
// disk outside its allowed directories, a VMI that is not the one it serves). Kept structured
// for callers that turn it into a condition, an Event or a gRPC INVALID_ARGUMENT.

import { formatFieldErrors, type FieldError, type FieldErrorType } from './field-error.js';

export class VmiInvalidError extends Error {
  readonly code = 'API_ERR_VMI_INVALID';
  readonly fieldErrors: readonly FieldError[];

  constructor(fieldErrors: readonly FieldError[], options?: { cause?: unknown }) {
    super(`invalid VirtualMachineInstance: ${formatFieldErrors(fieldErrors)}`, options);
    this.name = 'VmiInvalidError';
    this.fieldErrors = fieldErrors;
  }

  /** One problem at one field. */
  static at(field: string, type: FieldErrorType, message: string): VmiInvalidError {
    return new VmiInvalidError([{ field, type, message }]);
  }

  /** The first field named, which is the first to fix. */
  get field(): string {
    return this.fieldErrors[0]?.field ?? '';
  }
}
