import type { JsonObject } from './json.js';
import type { Registry } from './registry.js';
import type { ResourceType } from './resource-type.js';

const parameterNames = ['dryRun', 'fieldManager', 'fieldValidation', 'force'];

/**
 * A minimal OpenAPI v3 publication: one document per group/version listing each resource's
 * operations and query parameters. kubectl reads it to learn that the server validates
 * fields itself (`fieldValidation`); schemas are left out, so `kubectl apply` derives
 * strategic-merge metadata from its compiled-in types and uses merge patches for custom resources.
 */
export class OpenApiV3 {
  constructor(private readonly registry: Registry) {}

  root(): JsonObject {
    const paths: JsonObject = {};
    for (const { group, version } of this.registry.groupVersions()) {
      const key = group === '' ? `api/${version}` : `apis/${group}/${version}`;
      paths[key] = { serverRelativeURL: `/openapi/v3/${key}` };
    }
    return { paths };
  }

  groupVersion(group: string, version: string): JsonObject | undefined {
    const types = this.registry.all().filter((t) => t.group === group && t.version === version);
    if (types.length === 0) return undefined;
    const paths: JsonObject = {};
    for (const t of types) {
      const base = group === '' ? `/api/${version}` : `/apis/${group}/${version}`;
      const scope = t.namespaced ? `${base}/namespaces/{namespace}/${t.resource}` : `${base}/${t.resource}`;
      paths[scope] = { post: operation(t, 'create') };
      paths[`${scope}/{name}`] = { put: operation(t, 'replace'), patch: operation(t, 'patch') };
    }
    return {
      openapi: '3.0.0',
      info: { title: 'Kubernetes', version: 'v1.32.0-podvirt-testbed' },
      paths,
      components: { schemas: {} },
    };
  }
}

function operation(t: ResourceType, verb: string): JsonObject {
  return {
    operationId: `${verb}${t.kind}`,
    parameters: parameterNames.map((name) => ({ name, in: 'query', schema: { type: 'string', uniqueItems: true } })),
    responses: { '200': { description: 'OK' } },
    'x-kubernetes-action': verb === 'create' ? 'post' : verb === 'replace' ? 'put' : 'patch',
    'x-kubernetes-group-version-kind': { group: t.group, version: t.version, kind: t.kind },
  };
}
