// What admission knows of a request (kube-apiserver's admission.Attributes) and what the webhooks
// and the ValidatingAdmissionPolicies both match it with: rules, namespace and object selectors,
// and the CEL variables `request`, `object`, `oldObject` and `authorizer`.
import type { V1LabelSelector } from '@kubernetes/client-node';
import { ApiError } from '../errors.js';
import { arr, meta, obj, str, type JsonObject, type JsonValue } from '../json.js';
import type { ResourceType } from '../resource-type.js';
import type { Store } from '../store.js';
import { selectorMatches } from '../../scheduler/pod-anti-affinity.js';
import { CelAuthorizer, type CelValue } from './cel-subset.js';
import { rbacAllows } from './rbac-authorizer.js';

export type Operation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

/** What a request asks, in admission's terms (kube-apiserver's admission.Attributes). */
export interface AdmissionAttributes {
  readonly rt: ResourceType;
  /** '' for the main resource. */
  readonly subresource: string;
  readonly operation: Operation;
  readonly namespace: string;
  readonly name: string;
  /** The kind of `object` (policy/v1 Eviction for pods/eviction); the resource's kind otherwise. */
  readonly kind?: { group: string; version: string; kind: string };
  /** The object as the client sees it (external form); undefined on DELETE. */
  readonly object: JsonObject | undefined;
  readonly oldObject: JsonObject | undefined;
  /** The caller's user name ('' when anonymous). */
  readonly user: string;
  readonly dryRun: boolean;
  /** CreateOptions, UpdateOptions or DeleteOptions, as the request gave them. */
  readonly options: JsonObject | undefined;
}

const exempt = new Set(['validatingwebhookconfigurations', 'mutatingwebhookconfigurations', 'validatingadmissionpolicies', 'validatingadmissionpolicybindings']);

/** Admission configuration itself is never admitted by webhooks or policies (as kube-apiserver). */
export function exemptFromAdmission(attrs: AdmissionAttributes): boolean {
  return attrs.rt.group === 'admissionregistration.k8s.io' && exempt.has(attrs.rt.resource);
}

const namespaceResource = (rt: ResourceType): boolean => rt.group === '' && rt.resource === 'namespaces';

/** Kubernetes' rules.Matcher: scope, operation, group, version, resource/subresource. */
export function ruleMatches(rule: JsonObject, attrs: AdmissionAttributes): boolean {
  const any = (list: JsonValue | undefined, value: string): boolean => arr(list).some((v) => v === '*' || v === value);
  const scope = str(rule['scope']) ?? '*';
  const clusterish = namespaceResource(attrs.rt) || attrs.namespace === '';
  if (scope === 'Namespaced' && clusterish) return false;
  if (scope === 'Cluster' && !clusterish) return false;
  if (!any(rule['operations'], attrs.operation)) return false;
  if (!any(rule['apiGroups'], attrs.rt.group) || !any(rule['apiVersions'], attrs.rt.version)) return false;
  return arr(rule['resources']).some((entry) => {
    if (typeof entry !== 'string') return false;
    const [res = '', sub = ''] = entry.split(/\/(.*)/s);
    return (res === '*' || res === attrs.rt.resource) && (sub === '*' || sub === attrs.subresource);
  });
}

/** `namespaceSelector` and `objectSelector` of a webhook or of a policy's matchConstraints. */
export function selectorsMatch(store: Store, spec: JsonObject, attrs: AdmissionAttributes): boolean {
  if (!namespaceMatches(store, obj(spec['namespaceSelector']) as V1LabelSelector | undefined, attrs)) return false;
  const objectSelector = obj(spec['objectSelector']) as V1LabelSelector | undefined;
  const labelsOf = (o: JsonObject | undefined): Record<string, string> => (obj(meta(o ?? {})['labels']) ?? {}) as Record<string, string>;
  return objectSelector === undefined || selectorMatches(objectSelector, labelsOf(attrs.object)) || selectorMatches(objectSelector, labelsOf(attrs.oldObject));
}

function namespaceMatches(store: Store, selector: V1LabelSelector | undefined, attrs: AdmissionAttributes): boolean {
  if (selector === undefined) return true;
  let labels: Record<string, string>;
  if (namespaceResource(attrs.rt)) labels = (obj(meta(attrs.object ?? attrs.oldObject ?? {})['labels']) ?? {}) as Record<string, string>;
  else if (attrs.namespace === '') return true;
  else {
    const ns = store.get('namespaces', '', attrs.namespace);
    if (ns === undefined) throw ApiError.notFound({ group: '', resource: 'namespaces', name: attrs.namespace });
    labels = (obj(meta(ns)['labels']) ?? {}) as Record<string, string>;
  }
  return selectorMatches(selector, labels);
}

/** The AdmissionReview v1 request (also the `request` variable of CEL expressions). */
export function reviewRequest(uid: string, attrs: AdmissionAttributes): JsonObject {
  const kind = attrs.kind ?? { group: attrs.rt.group, version: attrs.rt.version, kind: attrs.rt.kind };
  const resource = { group: attrs.rt.group, version: attrs.rt.version, resource: attrs.rt.resource };
  const request: JsonObject = {
    uid,
    kind: { ...kind },
    resource: { ...resource },
    requestKind: { ...kind },
    requestResource: { ...resource },
    name: attrs.name,
    operation: attrs.operation,
    userInfo: userInfo(attrs.user),
    object: attrs.object ?? null,
    oldObject: attrs.oldObject ?? null,
    dryRun: attrs.dryRun,
    options: attrs.options ?? null,
  };
  if (attrs.subresource !== '') {
    request['subResource'] = attrs.subresource;
    request['requestSubResource'] = attrs.subresource;
  }
  if (attrs.namespace !== '') request['namespace'] = attrs.namespace;
  return request;
}

/** The testbed authenticates nobody: the bearer token is the user name; groups as the real authenticators give them. */
export function userInfo(user: string): { username: string; groups: string[] } {
  if (user === '') return { username: 'system:anonymous', groups: ['system:unauthenticated'] };
  const sa = /^system:serviceaccount:([^:]+):[^:]+$/.exec(user);
  const groups = sa === null ? ['system:authenticated'] : ['system:serviceaccounts', `system:serviceaccounts:${sa[1] ?? ''}`, 'system:authenticated'];
  return { username: user, groups };
}

/**
 * The variables of a webhook's matchConditions and of a policy's expressions. `authorizer` is
 * answered by the RBAC objects stored in this server (`rbac-authorizer.ts`) for the caller.
 */
export function celVariables(store: Store, attrs: AdmissionAttributes): Record<string, CelValue> {
  return {
    request: reviewRequest('', attrs) as CelValue,
    object: (attrs.object ?? null) as CelValue,
    oldObject: (attrs.oldObject ?? null) as CelValue,
    authorizer: new CelAuthorizer((check) => rbacAllows(store, { token: attrs.user, ...userInfo(attrs.user) }, check)),
  };
}
