import type { StatusCause } from './errors.js';
import type { JsonObject, JsonValue } from './json.js';

export type Subresource = 'status' | 'binding' | 'log' | 'eviction';

export interface ColumnDefinition {
  name: string;
  type: string;
  format: string;
  description: string;
  priority: number;
}

/** Server-side printing, as kube-apiserver's table convertors do for `kubectl get`. */
export interface TableSpec {
  columns: ColumnDefinition[];
  cells(obj: JsonObject, now: Date): JsonValue[];
}

/** Everything that differs per kind: defaults, validation, selectable fields, printing. */
export interface Strategy {
  /** Defaulting, applied to every write as decoding into the Go types does. */
  defaults?(obj: JsonObject): void;
  /** Server-set fields on create, after defaulting (initial status). */
  prepareForCreate(obj: JsonObject): void;
  /** Returns field errors; `old` is set on update. */
  validate(obj: JsonObject, old: JsonObject | undefined): StatusCause[];
  /** Values for field selectors besides metadata.name and metadata.namespace. */
  fields(obj: JsonObject): Record<string, string>;
  table: TableSpec;
  /** Grace period a DELETE gets when it names none; only pods are graceful. */
  deleteGrace?(obj: JsonObject, requested: number | undefined): number;
  /**
   * Whether a deleted object must stay although `metadata.finalizers` is empty (namespaces
   * wait for their `spec.finalizers`); may mark the object as terminating.
   */
  holdDeletion?(obj: JsonObject): boolean;
  /** Pruning against a structural schema (custom resources). */
  prune?(obj: JsonObject): void;
  /** Storage ↔ wire conversion when two API versions share one storage (events). */
  toExternal?(stored: JsonObject): JsonObject;
  fromExternal?(external: JsonObject): JsonObject;
}

export interface ResourceType {
  group: string;
  version: string;
  /** Plural resource name, as in URLs. */
  resource: string;
  singular: string;
  kind: string;
  listKind: string;
  namespaced: boolean;
  shortNames: string[];
  categories: string[];
  subresources: Subresource[];
  /** Storage shared between resource types that are versions of one another (events). */
  storageKey: string;
  /** Strategic merge patch is only defined for built-in kinds, never for custom resources. */
  strategicMerge: boolean;
  /** Discovery verbs when not the full set (bindings only accept create). */
  verbs?: string[];
  strategy: Strategy;
}

export function apiVersionOf(rt: ResourceType): string {
  return rt.group === '' ? rt.version : `${rt.group}/${rt.version}`;
}
