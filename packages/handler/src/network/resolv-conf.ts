/** The pod's resolver settings, as the guest should get them over DHCP. */
export interface ResolverConfig {
  readonly nameservers: readonly string[];
  /** IPv6 nameservers, for DHCPv6 (absent when the pod has none). */
  readonly nameservers6?: readonly string[];
  readonly searchDomains: readonly string[];
}

/** Reads resolv.conf text: `nameserver` lines (by family: DHCPv4 and DHCPv6 each carry their own) and the last `search` line. */
export function parseResolvConf(text: string): ResolverConfig {
  const nameservers: string[] = [];
  const nameservers6: string[] = [];
  let searchDomains: string[] = [];
  for (const raw of text.split('\n')) {
    const [key, ...values] = raw.replace(/[#;].*$/, '').trim().split(/\s+/);
    if (key === 'nameserver' && values[0] !== undefined && /^\d+\.\d+\.\d+\.\d+$/.test(values[0])) nameservers.push(values[0]);
    if (key === 'nameserver' && values[0] !== undefined && /^[0-9a-fA-F:]+$/.test(values[0]) && values[0].includes(':')) nameservers6.push(values[0].toLowerCase());
    if (key === 'search') searchDomains = values.filter((v) => v !== '');
  }
  return { nameservers, ...(nameservers6.length === 0 ? {} : { nameservers6 }), searchDomains };
}
