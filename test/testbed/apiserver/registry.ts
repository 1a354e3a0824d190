import type { ResourceType } from './resource-type.js';

/** The resource types the server serves, looked up the way URLs name them. */
export class Registry {
  readonly #types: ResourceType[] = [];

  add(...types: ResourceType[]): void {
    this.#types.push(...types);
  }

  find(group: string, version: string, resource: string): ResourceType | undefined {
    return this.#types.find((t) => t.group === group && t.version === version && t.resource === resource);
  }

  all(): readonly ResourceType[] {
    return this.#types;
  }

  /** Group/version pairs, in discovery order (core first, then groups as registered). */
  groupVersions(): Array<{ group: string; version: string }> {
    const seen = new Map<string, { group: string; version: string }>();
    for (const t of this.#types) seen.set(`${t.group}/${t.version}`, { group: t.group, version: t.version });
    return [...seen.values()];
  }

  /** Types that own a given storage (events are served by two API groups). */
  byStorageKey(storageKey: string): ResourceType[] {
    return this.#types.filter((t) => t.storageKey === storageKey);
  }

  /** Finds the type for an owner reference (`apiVersion` + `kind`). */
  byKind(apiVersion: string, kind: string): ResourceType | undefined {
    const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
    return this.#types.find((t) => t.group === group && t.version === version && t.kind === kind);
  }
}
