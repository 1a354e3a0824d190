import { jsonClone } from '@podvirt/api';
import { ApiError } from './errors.js';
import { meta, str, type JsonObject } from './json.js';

export type EventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface StoreEvent {
  type: EventType;
  revision: number;
  storageKey: string;
  namespace: string;
  name: string;
  object: JsonObject;
  /** The object before this change (absent for ADDED); watch filters need it. */
  previous?: JsonObject;
}

export type StoreListener = (event: StoreEvent) => void;

export interface StoreOptions {
  /** How many changes are kept for watch resume; older resourceVersions get 410. */
  historySize: number;
}

/**
 * The revision log, standing in for etcd: one global counter stamps every write, a bounded
 * history lets watches resume from a resourceVersion, and anything older is expired.
 */
export class Store {
  #revision = 1;
  readonly #objects = new Map<string, JsonObject>();
  #history: StoreEvent[] = [];
  readonly #listeners = new Set<StoreListener>();

  constructor(private readonly options: StoreOptions) {}

  get revision(): number {
    return this.#revision;
  }

  /** The oldest revision a watch or an exact list can start from. */
  get oldestResumable(): number {
    const first = this.#history[0];
    return first === undefined ? this.#revision : first.revision - 1;
  }

  get(storageKey: string, namespace: string, name: string): JsonObject | undefined {
    const found = this.#objects.get(keyOf(storageKey, namespace, name));
    return found === undefined ? undefined : jsonClone(found);
  }

  /** Current objects of one kind, sorted by namespace/name as etcd's key order gives them. */
  list(storageKey: string, namespace: string | undefined): JsonObject[] {
    const prefix = namespace === undefined ? `${storageKey}|` : `${storageKey}|${namespace}|`;
    return [...this.#objects.entries()]
      .filter(([key]) => key.startsWith(prefix))
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, value]) => jsonClone(value));
  }

  /** Every object of every kind; the garbage collector scans owner references with it. */
  all(): Array<{ storageKey: string; object: JsonObject }> {
    return [...this.#objects.entries()].map(([key, value]) => ({
      storageKey: key.slice(0, key.indexOf('|')),
      object: jsonClone(value),
    }));
  }

  /** The objects of one kind as they were at `revision`, rebuilt by undoing later history. */
  listAt(storageKey: string, namespace: string | undefined, revision: number): JsonObject[] {
    if (revision < this.oldestResumable) {
      throw ApiError.gone(`too old resource version: ${revision} (${this.oldestResumable})`);
    }
    const state = new Map(this.list(storageKey, namespace).map((o) => [nameKey(o), o]));
    for (const event of [...this.#history].reverse()) {
      if (event.revision <= revision) break;
      if (event.storageKey !== storageKey) continue;
      if (namespace !== undefined && event.namespace !== namespace) continue;
      const key = `${event.namespace}|${event.name}`;
      if (event.previous === undefined) state.delete(key);
      else state.set(key, jsonClone(event.previous));
    }
    return [...state.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, o]) => o);
  }

  /** Writes an object (create or update); stamps and returns the stored copy. */
  put(storageKey: string, object: JsonObject): JsonObject {
    const m = meta(object);
    const namespace = str(m['namespace']) ?? '';
    const name = str(m['name']) ?? '';
    const key = keyOf(storageKey, namespace, name);
    const previous = this.#objects.get(key);
    this.#revision += 1;
    m['resourceVersion'] = String(this.#revision);
    const stored = jsonClone(object);
    this.#objects.set(key, stored);
    const event: StoreEvent = {
      type: previous === undefined ? 'ADDED' : 'MODIFIED',
      revision: this.#revision,
      storageKey,
      namespace,
      name,
      object: stored,
    };
    if (previous !== undefined) event.previous = previous;
    this.#record(event);
    return jsonClone(stored);
  }

  /** Removes an object; the DELETED event carries it with the deletion's revision. */
  remove(storageKey: string, namespace: string, name: string): JsonObject | undefined {
    const key = keyOf(storageKey, namespace, name);
    const previous = this.#objects.get(key);
    if (previous === undefined) return undefined;
    this.#objects.delete(key);
    this.#revision += 1;
    const final = jsonClone(previous);
    meta(final)['resourceVersion'] = String(this.#revision);
    this.#record({ type: 'DELETED', revision: this.#revision, storageKey, namespace, name, object: final, previous });
    return jsonClone(final);
  }

  /** History after `revision` (exclusive), or an `Expired` error when it has been compacted. */
  since(revision: number): StoreEvent[] {
    if (revision < this.oldestResumable) {
      throw ApiError.expired(`too old resource version: ${revision} (${this.oldestResumable})`);
    }
    return this.#history.filter((e) => e.revision > revision);
  }

  /** Drops the whole history, as an etcd compaction does; later resumes from older revisions fail. */
  compact(): void {
    this.#history = [];
  }

  subscribe(listener: StoreListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #record(event: StoreEvent): void {
    this.#history.push(event);
    if (this.#history.length > this.options.historySize) {
      this.#history.splice(0, this.#history.length - this.options.historySize);
    }
    for (const listener of [...this.#listeners]) listener(event);
  }
}

function keyOf(storageKey: string, namespace: string, name: string): string {
  return `${storageKey}|${namespace}|${name}`;
}

function nameKey(o: JsonObject): string {
  const m = meta(o);
  return `${str(m['namespace']) ?? ''}|${str(m['name']) ?? ''}`;
}
