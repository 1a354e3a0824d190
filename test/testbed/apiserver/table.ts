import { meta, type JsonObject } from './json.js';
import type { ResourceType } from './resource-type.js';

export type IncludeObject = 'None' | 'Metadata' | 'Object';

/** Whether the client asked for server-side printing (`Accept: ...;as=Table;...`). */
export function wantsTable(accept: string | undefined): boolean {
  return accept !== undefined && accept.includes('as=Table');
}

/** A meta.k8s.io/v1 Table of `objects`, as kube-apiserver's table convertors produce it. */
export function toTable(rt: ResourceType, objects: JsonObject[], listMeta: JsonObject, include: IncludeObject, now: Date, withColumns = true): JsonObject {
  const rows = objects.map((object) => {
    const row: JsonObject = { cells: rt.strategy.table.cells(object, now) };
    if (include === 'Object') row['object'] = object;
    else if (include === 'Metadata') {
      row['object'] = { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: meta(object) };
    }
    return row;
  });
  const table: JsonObject = { kind: 'Table', apiVersion: 'meta.k8s.io/v1', metadata: listMeta };
  table['columnDefinitions'] = withColumns ? rt.strategy.table.columns.map((c) => ({ ...c })) : [];
  table['rows'] = rows;
  return table;
}

export function parseIncludeObject(value: string | null): IncludeObject {
  return value === 'None' || value === 'Object' ? value : 'Metadata';
}
