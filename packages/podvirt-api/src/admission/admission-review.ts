// admission.k8s.io/v1 AdmissionReview: what kube-apiserver posts to a webhook and the answer it
// expects. Only the fields podvirt-api reads or writes.

import { formatFieldError, formatFieldErrors, type FieldError } from '@podvirt/api';
import { PodvirtApiError } from '../api-error.js';

export type AdmissionOperation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

export interface AdmissionRequest {
  readonly uid: string;
  readonly kind: { readonly group: string; readonly version: string; readonly kind: string };
  readonly resource: { readonly group: string; readonly version: string; readonly resource: string };
  readonly subResource?: string;
  readonly name?: string;
  readonly namespace?: string;
  readonly operation: AdmissionOperation;
  readonly userInfo?: { readonly username?: string; readonly groups?: readonly string[] };
  readonly object?: unknown;
  readonly oldObject?: unknown;
  readonly dryRun?: boolean;
}

export interface AdmissionStatus {
  readonly code: number;
  readonly reason: string;
  readonly message: string;
  readonly details?: {
    readonly group?: string;
    readonly kind?: string;
    readonly name?: string;
    readonly causes: ReadonlyArray<{ readonly field: string; readonly reason: string; readonly message: string }>;
  };
}

/** What an admitter decides; the review around it is made by reviewResponse. */
export type AdmissionResult =
  | { readonly allowed: true; readonly patch?: readonly JsonPatchOp[] }
  | { readonly allowed: false; readonly status: AdmissionStatus };

export interface JsonPatchOp {
  readonly op: 'add' | 'replace' | 'remove';
  readonly path: string;
  readonly value?: unknown;
}

export const ALLOWED: AdmissionResult = { allowed: true };

// Kubernetes' field.ErrorType → the StatusCause reason it reports.
const CAUSE_REASONS: Readonly<Record<FieldError['type'], string>> = {
  Required: 'FieldValueRequired',
  Invalid: 'FieldValueInvalid',
  TypeInvalid: 'FieldValueTypeInvalid',
  Duplicate: 'FieldValueDuplicate',
  NotFound: 'FieldValueNotFound',
  NotSupported: 'FieldValueNotSupported',
  Forbidden: 'FieldValueForbidden',
  TooMany: 'FieldValueTooMany',
  TooLong: 'FieldValueTooLong',
};

/**
 * A refusal as an API server words an invalid object: 422 Invalid, every field a cause whose
 * message starts with the error type's words, so kubectl prints
 * `The VirtualMachineInstance "x" is invalid: spec.…: Unsupported value: …`.
 */
export function invalid(kind: string, name: string | undefined, errors: readonly FieldError[]): AdmissionResult {
  return {
    allowed: false,
    status: {
      code: 422,
      reason: 'Invalid',
      message: `${kind}${name ? ` "${name}"` : ''} is invalid: ${formatFieldErrors(errors)}`,
      details: {
        group: 'kubevirt.io',
        kind,
        ...(name ? { name } : {}),
        causes: errors.map((e) => ({ field: e.field, reason: CAUSE_REASONS[e.type], message: formatFieldError({ ...e, field: '' }) })),
      },
    },
  };
}

/** The AdmissionReview answer for `request`. */
export function reviewResponse(uid: string, result: AdmissionResult): unknown {
  const response = result.allowed
    ? {
      uid,
      allowed: true,
      ...(result.patch === undefined || result.patch.length === 0 ? {} : { patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(result.patch)).toString('base64') }),
    }
    : { uid, allowed: false, status: result.status };
  return { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response };
}

/** The request of a posted AdmissionReview; names what is missing. */
export function parseReview(body: unknown): AdmissionRequest {
  const review = body as { apiVersion?: unknown; kind?: unknown; request?: Partial<AdmissionRequest> } | null;
  if (typeof review !== 'object' || review === null || review.kind !== 'AdmissionReview') {
    throw new PodvirtApiError('PODVIRT_API_ERR_BAD_REVIEW', 'kind: must be AdmissionReview');
  }
  if (review.apiVersion !== 'admission.k8s.io/v1') throw new PodvirtApiError('PODVIRT_API_ERR_BAD_REVIEW', 'apiVersion: must be admission.k8s.io/v1');
  const r = review.request;
  if (typeof r !== 'object' || r === null) throw new PodvirtApiError('PODVIRT_API_ERR_BAD_REVIEW', 'request: required');
  if (typeof r.uid !== 'string' || r.uid === '') throw new PodvirtApiError('PODVIRT_API_ERR_BAD_REVIEW', 'request.uid: required');
  if (!['CREATE', 'UPDATE', 'DELETE', 'CONNECT'].includes(String(r.operation))) {
    throw new PodvirtApiError('PODVIRT_API_ERR_BAD_REVIEW', 'request.operation: must be CREATE, UPDATE, DELETE or CONNECT');
  }
  return r as AdmissionRequest;
}
