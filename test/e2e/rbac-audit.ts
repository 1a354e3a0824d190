// RBAC as kube-apiserver's audit log shows it was used: what a podvirt ServiceAccount asked, what
// was refused, and which permissions of its roles (ship-rbac-rules.ts) its requests needed. The
// real-control-plane faults run and, on the real lane, the migration run read it.
import { readAuditLog, requestsOf, serviceAccountUser, type AuditEvent } from '../testbed/control-plane/audit-log.js';
import type { ManifestDoc } from './ship-manifests-helpers.js';
import { grants, permission, rulesFor } from './ship-rbac-rules.js';

export interface RbacUse {
  /** Every request of the ServiceAccount in the log, in order. */
  readonly requests: readonly AuditEvent[];
  /** Those answered 403, or denied by the authorizer. */
  readonly refused: readonly AuditEvent[];
  /** `group resource[/subresource] verb` of every resource request made. */
  readonly used: ReadonlySet<string>;
  /** What its (Cluster)Roles grant, as `permission` spells it. */
  readonly granted: readonly string[];
  /** Used but not granted (a request the log shows allowed through another way, or refused). */
  readonly ungranted: readonly string[];
}

/** The use of `namespace/name`'s permissions in kube-apiserver's audit log at `auditLogPath`. */
export async function rbacUse(auditLogPath: string, manifests: readonly ManifestDoc[], namespace: string, name: string): Promise<RbacUse> {
  const requests = requestsOf(await readAuditLog(auditLogPath), serviceAccountUser(namespace, name));
  const refused = requests.filter((e) => e.responseStatus?.code === 403 || e.annotations?.['authorization.k8s.io/decision'] === 'forbid');
  const used = new Set(requests.filter((e) => e.objectRef?.resource !== undefined).map((e) => {
    const ref = e.objectRef ?? {};
    return permission(ref.apiGroup ?? '', `${ref.resource ?? ''}${ref.subresource === undefined ? '' : `/${ref.subresource}`}`, e.verb);
  }));
  const granted = grants(rulesFor(manifests, namespace, name));
  return { requests, refused, used, granted, ungranted: [...used].filter((p) => !granted.includes(p)) };
}

/** One request as a failure message shows it. */
export function showRequest(e: AuditEvent): string {
  return `${e.requestReceivedTimestamp} ${e.verb} ${e.requestURI} → ${String(e.responseStatus?.code ?? '?')}`;
}
