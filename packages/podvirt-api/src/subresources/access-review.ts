// Authorisation as the calling user: a SubjectAccessReview for the subresource, as KubeVirt's
// virt-api makes one. kube-apiserver has already authorised the proxied request; asking again here
// keeps a caller who reaches podvirt-api another way to the same RBAC.

import type { KubeClient } from '@podvirt/kube-runtime';
import type { CallingUser } from './request-header-auth.js';
import { SUBRESOURCE_GROUP, SUBRESOURCE_VERSION } from './subresource-routes.js';

export interface AccessQuestion {
  readonly user: CallingUser;
  readonly verb: string;
  readonly namespace: string;
  readonly resource: string;
  readonly subresource: string;
  readonly name: string;
}

export type AccessAnswer = { readonly allowed: true } | { readonly allowed: false; readonly reason: string };

/** The one question podvirt-api asks the authoriser; a fake in tests. */
export type AccessReviewer = (q: AccessQuestion, signal?: AbortSignal) => Promise<AccessAnswer>;

interface SubjectAccessReviewStatus {
  readonly status?: { readonly allowed?: boolean; readonly denied?: boolean; readonly reason?: string; readonly evaluationError?: string };
}

export function kubeAccessReviewer(client: KubeClient): AccessReviewer {
  return async (q, signal) => {
    const review = await client.request<SubjectAccessReviewStatus>({
      method: 'POST',
      path: '/apis/authorization.k8s.io/v1/subjectaccessreviews',
      body: {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        spec: {
          user: q.user.name,
          groups: q.user.groups,
          extra: q.user.extra,
          resourceAttributes: {
            namespace: q.namespace, verb: q.verb, group: SUBRESOURCE_GROUP, version: SUBRESOURCE_VERSION,
            resource: q.resource, subresource: q.subresource, name: q.name,
          },
        },
      },
      ...(signal === undefined ? {} : { signal }),
    });
    if (review.status?.allowed === true) return { allowed: true };
    return { allowed: false, reason: review.status?.reason ?? review.status?.evaluationError ?? '' };
  };
}

/** What kube-apiserver says of a refusal, so the caller reads the same sentence either way. */
export function forbiddenMessage(q: AccessQuestion, reason: string): string {
  const where = `in API group "${SUBRESOURCE_GROUP}" in the namespace "${q.namespace}"`;
  const why = reason === '' ? '' : `: ${reason}`;
  return `${q.resource}.${SUBRESOURCE_GROUP} "${q.name}" is forbidden: User "${q.user.name}" cannot ${q.verb} resource "${q.resource}/${q.subresource}" ${where}${why}`;
}
