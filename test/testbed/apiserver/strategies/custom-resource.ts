import { ageOf } from '../human-duration.js';
import { type JsonObject, type JsonValue, meta, str } from '../json.js';
import { evaluateJsonPath } from '../jsonpath.js';
import { pruneObjectMeta, validateObjectMeta } from '../object-meta.js';
import type { ColumnDefinition, Strategy } from '../resource-type.js';
import { prune, validateSchema, type SchemaNode } from '../structural-schema.js';
import { column } from './columns.js';

export interface PrinterColumn {
  name: string;
  type: string;
  jsonPath: string;
  description?: string;
  priority?: number;
  format?: string;
}

/** A custom resource's strategy, derived from its CRD version: structural schema and printer columns. */
export function customResourceStrategy(schema: SchemaNode, printerColumns: PrinterColumn[], hasStatus: boolean): Strategy {
  const columns: ColumnDefinition[] = [
    column('Name', 0, 'string', 'name'),
    ...printerColumns.map((c) => ({
      name: c.name,
      type: c.type === 'date' ? 'string' : c.type,
      format: c.format ?? '',
      description: c.description ?? c.name,
      priority: c.priority ?? 0,
    })),
  ];
  // As apiextensions-apiserver: Age only stands in for a CRD that declares no columns at all.
  const defaultAge = printerColumns.length === 0;
  if (defaultAge) columns.push(column('Age'));
  return {
    prepareForCreate(cr) {
      // With a status subresource, status is written only through it, never on create.
      if (hasStatus) delete cr['status'];
    },
    prune(cr) {
      pruneObjectMeta(cr);
      prune(cr, schema);
    },
    validate: (cr) => [...validateObjectMeta(cr, 'subdomain'), ...validateSchema(cr, schema)],
    fields: () => ({}),
    table: {
      columns,
      cells(cr, now) {
        const cells: JsonValue[] = [str(meta(cr)['name']) ?? ''];
        for (const c of printerColumns) cells.push(cell(cr, c, now));
        if (defaultAge) cells.push(ageOf(meta(cr)['creationTimestamp'], now));
        return cells;
      },
    },
  };
}

function cell(cr: JsonObject, c: PrinterColumn, now: Date): JsonValue {
  const value = evaluateJsonPath(cr, c.jsonPath)[0];
  if (value === undefined || value === null) return c.type === 'date' ? '<unknown>' : '';
  if (c.type === 'date') return ageOf(value, now);
  return value;
}
