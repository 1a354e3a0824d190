import { ageOf } from '../human-duration.js';
import { meta, obj, str, type JsonObject, type JsonValue } from '../json.js';
import { validateObjectMeta } from '../object-meta.js';
import type { Strategy } from '../resource-type.js';
import { column } from './columns.js';

const involvedFields = ['kind', 'namespace', 'name', 'uid', 'apiVersion', 'resourceVersion', 'fieldPath'];

/** core/v1 Events; events.k8s.io/v1 shares their storage through the conversion below. */
export const eventStrategy: Strategy = {
  prepareForCreate() {},
  validate: (event) => validateObjectMeta(event, 'subdomain'),
  fields(event) {
    const involved = obj(event['involvedObject']) ?? {};
    const fields: Record<string, string> = {
      reason: str(event['reason']) ?? '',
      type: str(event['type']) ?? '',
      source: str(obj(event['source'])?.['component']) ?? str(event['reportingComponent']) ?? '',
      reportingComponent: str(event['reportingComponent']) ?? '',
    };
    for (const f of involvedFields) {
      const value = involved[f];
      fields[`involvedObject.${f}`] = value === undefined || value === null ? '' : String(value as string);
      fields[`regarding.${f}`] = fields[`involvedObject.${f}`] ?? '';
    }
    return fields;
  },
  table: {
    columns: [column('Last Seen'), column('Type'), column('Reason'), column('Object'), column('Message')],
    cells(event, now) {
      const involved = obj(event['involvedObject']) ?? {};
      const last = event['lastTimestamp'] ?? event['eventTime'] ?? meta(event)['creationTimestamp'];
      return [
        ageOf(last, now),
        str(event['type']) ?? '',
        str(event['reason']) ?? '',
        `${(str(involved['kind']) ?? '').toLowerCase()}/${str(involved['name']) ?? ''}`,
        str(event['message']) ?? '',
      ];
    },
  },
};

const renames: Array<[core: string, v1: string]> = [
  ['involvedObject', 'regarding'],
  ['message', 'note'],
  ['reportingComponent', 'reportingController'],
  ['source', 'deprecatedSource'],
  ['firstTimestamp', 'deprecatedFirstTimestamp'],
  ['lastTimestamp', 'deprecatedLastTimestamp'],
  ['count', 'deprecatedCount'],
];
const shared = ['metadata', 'eventTime', 'series', 'reportingInstance', 'action', 'reason', 'related', 'type'];

function convert(from: JsonObject, apiVersion: string, toV1: boolean): JsonObject {
  const out: JsonObject = { apiVersion, kind: 'Event' };
  for (const key of shared) if (from[key] !== undefined) out[key] = from[key] as JsonValue;
  for (const [core, v1] of renames) {
    const [src, dst] = toV1 ? [core, v1] : [v1, core];
    if (from[src] !== undefined) out[dst] = from[src] as JsonValue;
  }
  return out;
}

export const eventsV1Strategy: Strategy = {
  ...eventStrategy,
  toExternal: (stored) => convert(stored, 'events.k8s.io/v1', true),
  fromExternal: (external) => convert(external, 'v1', false),
};
