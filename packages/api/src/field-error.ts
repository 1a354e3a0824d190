// Field errors in the shape of Kubernetes' field.Error: a JSON path such as
// `spec.domain.devices.disks[1].name`, a type, and a message that says what is wrong and what
// would be accepted. Validation and unsupported-field detection both produce them.

export type FieldErrorType =
  | 'Required'
  | 'Invalid'
  | 'TypeInvalid'
  | 'Duplicate'
  | 'NotFound'
  | 'NotSupported'
  | 'Forbidden'
  | 'TooMany'
  | 'TooLong';

export interface FieldError {
  readonly field: string;
  readonly type: FieldErrorType;
  readonly message: string;
}

// The same words Kubernetes prints, so messages read the same as an API server's.
const TYPE_LABELS: Readonly<Record<FieldErrorType, string>> = {
  Required: 'Required value',
  Invalid: 'Invalid value',
  TypeInvalid: 'Invalid value',
  Duplicate: 'Duplicate value',
  NotFound: 'Not found',
  NotSupported: 'Unsupported value',
  Forbidden: 'Forbidden',
  TooMany: 'Too many',
  TooLong: 'Too long',
};

/** The words a formatted field error puts after its field (`field: Label: detail`), each once. */
export const FIELD_ERROR_LABELS: readonly string[] = [...new Set(Object.values(TYPE_LABELS))];

export function formatFieldError(error: FieldError): string {
  const label = TYPE_LABELS[error.type];
  return error.field === '' ? `${label}: ${error.message}` : `${error.field}: ${label}: ${error.message}`;
}

/** All errors on one line, separated by `; `, for a condition message, an Event or a gRPC status. */
export function formatFieldErrors(errors: readonly FieldError[]): string {
  return errors.map(formatFieldError).join('; ');
}
