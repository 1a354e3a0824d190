import type { ColumnDefinition } from '../resource-type.js';

/** A printer column; `priority` 1 columns only show with `-o wide`. */
export function column(name: string, priority = 0, type = 'string', format = ''): ColumnDefinition {
  return { name, type, format, description: name, priority };
}
