/** KubeVirt's domain name: `<namespace>_<name>` (both are DNS labels, so `_` cannot be ambiguous). */
export function domainName(namespace: string, name: string): string {
  return `${namespace}_${name}`;
}
