// RBAC as kube-apiserver's RBAC authorizer decides a resource request, from the Roles,
// ClusterRoles and their bindings stored in this server. The server itself authorizes no request
// (every caller may do anything); this answers the questions admission asks through CEL's
// `authorizer` library. The caller without a token is the testbed's administrator (the in-repo
// kubeconfig's user, who plays system:masters), so every question about it is answered yes.
import { arr, meta, obj, str, type JsonObject } from '../json.js';
import type { Store } from '../store.js';
import type { AuthorizerCheck } from './cel-subset.js';

/** Whether the caller (`token`: '' without one; its user name and groups) may do `check`. */
export function rbacAllows(store: Store, caller: { token: string; username: string; groups: readonly string[] }, check: AuthorizerCheck): boolean {
  const { username, groups } = caller;
  if (caller.token === '' || groups.includes('system:masters')) return true;
  const bound = (binding: JsonObject, bindingNamespace: string): boolean => arr(binding['subjects']).some((s) => {
    const subject = obj(s) ?? {};
    const name = str(subject['name']) ?? '';
    switch (subject['kind']) {
      case 'User': return name === username;
      case 'Group': return groups.includes(name);
      case 'ServiceAccount': return username === `system:serviceaccount:${str(subject['namespace']) ?? bindingNamespace}:${name}`;
      default: return false;
    }
  });
  const rulesOf = (roleRef: JsonObject, bindingNamespace: string): JsonObject[] => {
    const name = str(roleRef['name']) ?? '';
    const role = roleRef['kind'] === 'ClusterRole' ? store.get('clusterroles', '', name) : store.get('roles', bindingNamespace, name);
    return arr(role?.['rules']).map((r) => obj(r) ?? {});
  };
  const grants = (rules: JsonObject[]): boolean => rules.some((rule) => ruleAllows(rule, check));
  for (const binding of store.list('clusterrolebindings', undefined)) {
    if (bound(binding, '') && grants(rulesOf(obj(binding['roleRef']) ?? {}, ''))) return true;
  }
  if (check.namespace === '') return false;
  for (const binding of store.list('rolebindings', check.namespace)) {
    const ns = str(meta(binding)['namespace']) ?? check.namespace;
    if (bound(binding, ns) && grants(rulesOf(obj(binding['roleRef']) ?? {}, ns))) return true;
  }
  return false;
}

/** rbac/v1 RuleAllows for a resource request: verb, group, resource (with subresource), name. */
function ruleAllows(rule: JsonObject, check: AuthorizerCheck): boolean {
  const has = (key: string, value: string): boolean => arr(rule[key]).some((v) => v === '*' || v === value);
  if (!has('verbs', check.verb) || !has('apiGroups', check.group)) return false;
  const resource = check.subresource === '' ? check.resource : `${check.resource}/${check.subresource}`;
  const resourceOk = arr(rule['resources']).some((r) => r === '*' || r === resource || (check.subresource !== '' && r === `*/${check.subresource}`));
  if (!resourceOk) return false;
  const names = arr(rule['resourceNames']);
  return names.length === 0 || names.includes(check.name);
}
