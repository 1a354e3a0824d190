// Label and annotation checks with Kubernetes' rules and wording (apimachinery's
// ValidateLabels / ValidateAnnotations): qualified-name keys with an optional DNS-subdomain
// prefix, label values of at most 63 characters, and at most 256 KiB of annotations.
import type { StatusCause } from './errors.js';
import type { JsonObject } from './json.js';

const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const NAME_RULE = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const NAME_REGEX = "regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]'";
const SUBDOMAIN_RULE = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
export const TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024;

/** Go's %q of a value, cut as the API server shows long values in messages. */
function quoted(value: string): string {
  return JSON.stringify(value.length > 1024 ? `${value.slice(0, 1024)}...` : value);
}

function qualifiedNameProblems(key: string): string[] {
  const parts = key.split('/');
  let name: string;
  const problems: string[] = [];
  if (parts.length === 1) {
    name = parts[0] ?? '';
  } else if (parts.length === 2) {
    const prefix = parts[0] ?? '';
    name = parts[1] ?? '';
    if (prefix.length === 0) problems.push('prefix part must be non-empty');
    else if (prefix.length > 253) problems.push('prefix part must be no more than 253 characters');
    else if (!SUBDOMAIN.test(prefix)) problems.push(`prefix part ${SUBDOMAIN_RULE}`);
  } else {
    return [`a qualified name ${NAME_RULE} (e.g. 'MyName',  or 'my.name',  or '123-abc', ${NAME_REGEX}) with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`];
  }
  if (name.length === 0) problems.push('name part must be non-empty');
  else if (name.length > 63) problems.push('name part must be no more than 63 characters');
  if (name.length > 0 && !QUALIFIED_NAME.test(name)) problems.push(`name part ${NAME_RULE} (e.g. 'MyName',  or 'my.name',  or '123-abc', ${NAME_REGEX})`);
  return problems;
}

function labelValueProblems(value: string): string[] {
  const problems: string[] = [];
  if (value.length > 63) problems.push('must be no more than 63 characters');
  if (value !== '' && !QUALIFIED_NAME.test(value)) {
    problems.push(`a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`);
  }
  return problems;
}

const invalid = (field: string, value: string, problem: string): StatusCause =>
  ({ reason: 'FieldValueInvalid', message: `Invalid value: ${quoted(value)}: ${problem}`, field });

export function validateLabels(labels: JsonObject, field = 'metadata.labels'): StatusCause[] {
  const causes: StatusCause[] = [];
  for (const [key, value] of Object.entries(labels)) {
    for (const p of qualifiedNameProblems(key)) causes.push(invalid(field, key, p));
    if (typeof value === 'string') for (const p of labelValueProblems(value)) causes.push(invalid(field, value, p));
  }
  return causes;
}

export function validateAnnotations(annotations: JsonObject, field = 'metadata.annotations'): StatusCause[] {
  const causes: StatusCause[] = [];
  let total = 0;
  for (const [key, value] of Object.entries(annotations)) {
    for (const p of qualifiedNameProblems(key.toLowerCase())) causes.push(invalid(field, key, p));
    total += Buffer.byteLength(key) + (typeof value === 'string' ? Buffer.byteLength(value) : 0);
  }
  if (total > TOTAL_ANNOTATION_SIZE_LIMIT) {
    causes.push({ reason: 'FieldValueTooLong', message: `Too long: may not be more than ${TOTAL_ANNOTATION_SIZE_LIMIT} bytes`, field });
  }
  return causes;
}
