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

// What kubectl asks for; the API server answers with the same type spelt without the "@",
// which Go's MIME parser rejects.
const V2_PROTOBUF_ACCEPT = 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf';
const V2_PROTOBUF = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';

/**
 * `/openapi/v2`: a Swagger 2.0 document with no definitions. kubectl's client-side validation
 * downloads it (as protobuf) and skips kinds it does not describe, so `kubectl apply` goes on
 * to discovery and reports an unknown kind as a real cluster does ("no matches for kind")
 * instead of "failed to download openapi"; the server validates objects itself.
 */
export function openApiV2(accept: string): { contentType: string; body: Buffer } {
  if (accept.includes(V2_PROTOBUF_ACCEPT) || accept.includes(V2_PROTOBUF)) {
    // openapi_v2.Document: field 1 `swagger` = "2.0"; field 2 `info` = { 1 title, 2 version }.
    const str = (field: number, text: string): Buffer => Buffer.concat([Buffer.from([(field << 3) | 2, Buffer.byteLength(text)]), Buffer.from(text)]);
    const info = Buffer.concat([str(1, 'Kubernetes'), str(2, 'v1.32.0')]);
    const body = Buffer.concat([str(1, '2.0'), Buffer.from([(2 << 3) | 2, info.length]), info]);
    return { contentType: V2_PROTOBUF, body };
  }
  const doc = { swagger: '2.0', info: { title: 'Kubernetes', version: 'v1.32.0' }, paths: {}, definitions: {} };
  return { contentType: 'application/json', body: Buffer.from(JSON.stringify(doc)) };
}
