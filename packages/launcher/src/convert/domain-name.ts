import { createHash } from 'node:crypto';

/**
 * libvirt keeps each domain's XML as `<name>.xml` (and writes `<name>.xml.new` first), so a
 * name longer than about 245 bytes cannot be defined ("File name too long"). A namespace (63)
 * plus a VMI name (253) can reach 317, so past this bound the name is cut and a hash of the
 * whole keeps it unique.
 */
const MAX_DOMAIN_NAME = 200;
const HASH_CHARS = 16;

/** KubeVirt's domain name: `<namespace>_<name>` (both are DNS names, so `_` cannot be ambiguous). */
export function domainName(namespace: string, name: string): string {
  const full = `${namespace}_${name}`;
  if (full.length <= MAX_DOMAIN_NAME) return full;
  const hash = createHash('sha256').update(full).digest('hex').slice(0, HASH_CHARS);
  return `${full.slice(0, MAX_DOMAIN_NAME - HASH_CHARS - 1)}-${hash}`;
}
