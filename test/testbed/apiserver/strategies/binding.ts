import type { Strategy } from '../resource-type.js';

/** Bindings are never stored; the handler applies them to the pod they name. */
export const bindingStrategy: Strategy = {
  prepareForCreate() {},
  validate: () => [],
  fields: () => ({}),
  table: { columns: [], cells: () => [] },
};
