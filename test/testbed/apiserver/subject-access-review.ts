// authorization.k8s.io/v1 SubjectAccessReview: "may this user do this?", answered by the same RBAC
// evaluation the admission policies' `authorizer` uses (an aggregated API server asks it of each
// proxied call). Nothing is stored. A user in system:masters may do anything, as in Kubernetes.
import { rbacAllows } from './admission/rbac-authorizer.js';
import { ApiError } from './errors.js';
import { arr, isObject, obj, str, type JsonObject, type JsonValue } from './json.js';

export const SUBJECT_ACCESS_REVIEW_PATH = '/apis/authorization.k8s.io/v1/subjectaccessreviews';

/** The review with its `status`; a body that is not one is a 400 naming the field. */
export function reviewAccess(store: Parameters<typeof rbacAllows>[0], body: JsonValue | undefined): JsonObject {
  if (!isObject(body)) throw ApiError.badRequest('SubjectAccessReview: the body is not an object');
  const spec = obj(body['spec']);
  if (spec === undefined) throw ApiError.badRequest('SubjectAccessReview: spec is required');
  const user = str(spec['user']) ?? '';
  const groups = arr(spec['groups']).filter((g): g is string => typeof g === 'string');
  if (user === '' && groups.length === 0) throw ApiError.badRequest('SubjectAccessReview: spec.user or spec.groups is required');
  const attrs = obj(spec['resourceAttributes']);
  if (attrs === undefined) throw ApiError.badRequest('SubjectAccessReview: spec.resourceAttributes is required (non-resource URLs are not answered here)');
  const field = (key: string): string => str(attrs[key]) ?? '';
  const allowed = rbacAllows(store, { token: user === '' ? '-' : user, username: user, groups }, {
    verb: field('verb'), group: field('group'), resource: field('resource'), subresource: field('subresource'), namespace: field('namespace'), name: field('name'),
  });
  return {
    apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', metadata: {}, spec,
    status: allowed ? { allowed: true, reason: 'RBAC: allowed by a binding' } : { allowed: false },
  };
}
