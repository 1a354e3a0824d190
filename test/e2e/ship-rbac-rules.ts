// RBAC as the API server's authorizer applies it, for the ServiceAccounts of the install
// manifests: which rules reach a user through (Cluster)RoleBindings, and whether they allow a
// request as the testbed's audit log records it.
import type { RequestRecord } from '../testbed/apiserver/index.js';
import { at, docs, type ManifestDoc } from './ship-manifests-helpers.js';

export interface Rule {
  readonly apiGroups: readonly string[];
  readonly resources: readonly string[];
  readonly verbs: readonly string[];
  readonly resourceNames: readonly string[];
  /** Set for a Role's rules: they hold only in its namespace. */
  readonly namespace: string | undefined;
}

/** Rules bound to `system:serviceaccount:<namespace>:<name>`. */
export function rulesFor(manifests: readonly ManifestDoc[], namespace: string, name: string): Rule[] {
  const rules: Rule[] = [];
  for (const { doc } of manifests) {
    if (doc['kind'] !== 'ClusterRoleBinding' && doc['kind'] !== 'RoleBinding') continue;
    const bound = docs(doc['subjects']).some((s) => s['kind'] === 'ServiceAccount' && s['name'] === name && s['namespace'] === namespace);
    if (!bound) continue;
    const bindingNs = doc['kind'] === 'RoleBinding' ? String(at(doc, 'metadata', 'namespace')) : undefined;
    const roleKind = String(at(doc, 'roleRef', 'kind'));
    const roleName = String(at(doc, 'roleRef', 'name'));
    const role = manifests.find((m) => m.doc['kind'] === roleKind && at(m.doc, 'metadata', 'name') === roleName && (roleKind === 'ClusterRole' || at(m.doc, 'metadata', 'namespace') === bindingNs));
    if (role === undefined) throw new Error(`${String(doc['kind'])} ${String(at(doc, 'metadata', 'name'))} refers to a missing ${roleKind} ${roleName}`);
    for (const r of docs(role.doc['rules'])) {
      rules.push({
        apiGroups: strings(r['apiGroups']),
        resources: strings(r['resources']),
        verbs: strings(r['verbs']),
        resourceNames: strings(r['resourceNames']),
        namespace: bindingNs,
      });
    }
  }
  return rules;
}

export function allows(rules: readonly Rule[], req: RequestRecord): boolean {
  return rules.some((r) =>
    (r.apiGroups.includes(req.apiGroup) || r.apiGroups.includes('*')) &&
    (r.resources.includes(req.resource) || r.resources.includes('*')) &&
    (r.verbs.includes(req.verb) || r.verbs.includes('*')) &&
    (r.namespace === undefined || r.namespace === req.namespace) &&
    (r.resourceNames.length === 0 || (req.name !== undefined && r.resourceNames.includes(req.name))));
}

/** `group resource verb` for every permission the rules grant (no wildcards are used). */
export function grants(rules: readonly Rule[]): string[] {
  return rules.flatMap((r) => r.apiGroups.flatMap((g) => r.resources.flatMap((res) => r.verbs.map((v) => permission(g, res, v)))));
}

export function permission(group: string, resource: string, verb: string): string {
  return `${group === '' ? 'core' : group} ${resource} ${verb}`;
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.map(String) : [];
}
