import type { JsonObject } from './json.js';
import type { Registry } from './registry.js';
import type { ResourceType } from './resource-type.js';

const mainVerbs = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];
const subresourceVerbs: Record<string, string[]> = { status: ['get', 'patch', 'update'], binding: ['create'], log: ['get'], eviction: ['create'] };

/** The discovery documents kubectl and client libraries read to map kinds to resources. */
export class Discovery {
  constructor(
    private readonly registry: Registry,
    private readonly serverAddress: () => string,
    /** The aggregated APIs (their APIServices): listed here, their resources served by their own server. */
    private readonly aggregated: () => ReadonlyArray<{ group: string; version: string }> = () => [],
  ) {}

  version(): JsonObject {
    return {
      major: '1',
      minor: '32',
      gitVersion: 'v1.32.0-podvirt-testbed',
      gitCommit: '0000000000000000000000000000000000000000',
      gitTreeState: 'clean',
      buildDate: '2025-01-01T00:00:00Z',
      goVersion: 'go1.23',
      compiler: 'gc',
      platform: 'linux/amd64',
    };
  }

  coreVersions(): JsonObject {
    return {
      kind: 'APIVersions',
      versions: ['v1'],
      serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: this.serverAddress() }],
    };
  }

  groupList(): JsonObject {
    return { kind: 'APIGroupList', apiVersion: 'v1', groups: this.#groups().map((g) => this.#group(g)) };
  }

  group(name: string): JsonObject | undefined {
    return this.#groups().includes(name) ? { kind: 'APIGroup', apiVersion: 'v1', ...this.#group(name) } : undefined;
  }

  resourceList(group: string, version: string): JsonObject | undefined {
    const types = this.registry.all().filter((t) => t.group === group && t.version === version);
    if (types.length === 0) return undefined;
    return {
      kind: 'APIResourceList',
      apiVersion: 'v1',
      groupVersion: group === '' ? version : `${group}/${version}`,
      resources: types.flatMap((t) => [mainResource(t), ...t.subresources.map((s) => subresource(t, s))]),
    };
  }

  #groups(): string[] {
    return [...new Set(this.#groupVersions().map((gv) => gv.group))].filter((g) => g !== '');
  }

  #groupVersions(): Array<{ group: string; version: string }> {
    return [...this.registry.groupVersions(), ...this.aggregated()];
  }

  #group(name: string): JsonObject {
    const versions = this
      .#groupVersions()
      .filter((gv) => gv.group === name)
      .map((gv) => ({ groupVersion: `${name}/${gv.version}`, version: gv.version }));
    return { name, versions, preferredVersion: versions[0] ?? null };
  }
}

function mainResource(t: ResourceType): JsonObject {
  const r: JsonObject = {
    name: t.resource,
    singularName: t.singular,
    namespaced: t.namespaced,
    kind: t.kind,
    verbs: t.verbs ?? mainVerbs,
  };
  if (t.shortNames.length > 0) r['shortNames'] = t.shortNames;
  if (t.categories.length > 0) r['categories'] = t.categories;
  return r;
}

function subresource(t: ResourceType, name: string): JsonObject {
  const kind = name === 'binding' ? 'Binding' : t.kind;
  // kubectl drain finds the Eviction's group and version here (CheckEvictionSupport).
  if (name === 'eviction') return { name: `${t.resource}/${name}`, singularName: '', namespaced: t.namespaced, group: 'policy', version: 'v1', kind: 'Eviction', verbs: subresourceVerbs[name] ?? [] };
  return { name: `${t.resource}/${name}`, singularName: '', namespaced: t.namespaced, kind, verbs: subresourceVerbs[name] ?? [] };
}
