import { arr, isObject, obj, str, type JsonObject } from './json.js';
import type { ResourceType } from './resource-type.js';
import { customResourceStrategy, type PrinterColumn } from './strategies/custom-resource.js';
import type { SchemaNode } from './structural-schema.js';

export class CrdError extends Error {
  readonly code = 'APISERVER_BAD_CRD';
}

/** Resource types for every served version of an apiextensions.k8s.io/v1 CustomResourceDefinition. */
export function resourceTypesFromCrd(crd: JsonObject): ResourceType[] {
  const spec = obj(crd['spec']);
  const names = obj(spec?.['names']);
  const group = str(spec?.['group']);
  const plural = str(names?.['plural']);
  const kind = str(names?.['kind']);
  if (spec === undefined || names === undefined || group === undefined || plural === undefined || kind === undefined) {
    throw new CrdError('CRD needs spec.group, spec.names.plural and spec.names.kind');
  }
  return arr(spec['versions'])
    .filter(isObject)
    .filter((v) => v['served'] !== false)
    .map((v): ResourceType => {
      const version = str(v['name']) ?? 'v1';
      const schema = obj(obj(v['schema'])?.['openAPIV3Schema']);
      if (schema === undefined) throw new CrdError(`CRD version ${version} has no openAPIV3Schema`);
      const hasStatus = obj(obj(v['subresources'])?.['status']) !== undefined;
      const columns = arr(v['additionalPrinterColumns']).filter(isObject) as unknown as PrinterColumn[];
      return {
        group,
        version,
        resource: plural,
        singular: str(names['singular']) ?? kind.toLowerCase(),
        kind,
        listKind: str(names['listKind']) ?? `${kind}List`,
        namespaced: spec['scope'] !== 'Cluster',
        shortNames: arr(names['shortNames']).filter((s): s is string => typeof s === 'string'),
        categories: arr(names['categories']).filter((s): s is string => typeof s === 'string'),
        subresources: hasStatus ? ['status'] : [],
        storageKey: `${plural}.${group}`,
        strategicMerge: false,
        strategy: customResourceStrategy(schema as SchemaNode, columns, hasStatus),
      };
    });
}
