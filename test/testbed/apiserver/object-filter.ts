import { meta, obj, str, type JsonObject } from './json.js';
import type { ResourceType } from './resource-type.js';
import { parseFieldSelector, parseLabelSelector } from './selectors.js';

export type ObjectFilter = (object: JsonObject) => boolean;

/** Label + field selector matching for one resource type, shared by list and watch. */
export function objectFilter(rt: ResourceType, labelSelector: string | undefined, fieldSelector: string | undefined): ObjectFilter {
  const labels = parseLabelSelector(labelSelector);
  const supported = new Set(['metadata.name', 'metadata.namespace', ...Object.keys(rt.strategy.fields({}))]);
  const fields = parseFieldSelector(fieldSelector, supported);
  return (object) => {
    const m = meta(object);
    const labelValues: Record<string, string> = {};
    for (const [k, v] of Object.entries(obj(m['labels']) ?? {})) if (typeof v === 'string') labelValues[k] = v;
    const fieldValues = {
      'metadata.name': str(m['name']) ?? '',
      'metadata.namespace': str(m['namespace']) ?? '',
      ...rt.strategy.fields(object),
    };
    return labels.matches(labelValues) && fields.matches(fieldValues);
  };
}
