// Event names derive from the object's name, and an object's name may use all 253 characters
// of a DNS subdomain: `<name>.<suffix>` would then be refused with 422 and the Event lost. The
// name part is cut so that the whole stays a valid subdomain within the limit.

const MAX_NAME = 253;

/** `<object name, cut to fit>.<suffix>`; the cut never ends a label with "-" or ".". */
export function eventName(objectName: string, suffix: string): string {
  return `${eventNamePrefix(objectName, suffix.length)}${suffix}`;
}

/** The `generateName` (ending in ".") for an object's Event, leaving room for `suffixLength` characters. */
export function eventNamePrefix(objectName: string, suffixLength: number): string {
  const room = MAX_NAME - 1 - suffixLength;
  const base = objectName.length > room ? objectName.slice(0, room).replace(/[-.]+$/, '') : objectName;
  return `${base === '' ? 'event' : base}.`;
}
