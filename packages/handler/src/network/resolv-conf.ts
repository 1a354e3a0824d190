/** The pod's resolver settings, as the guest should get them over DHCP. */
export interface ResolverConfig {
  readonly nameservers: readonly string[];
  readonly searchDomains: readonly string[];
}

/** Reads resolv.conf text: `nameserver` lines (IPv4 only, DHCPv4 carries no other) and the last `search` line. */
export function parseResolvConf(text: string): ResolverConfig {
  const nameservers: string[] = [];
  let searchDomains: string[] = [];
  for (const raw of text.split('\n')) {
    const [key, ...values] = raw.replace(/[#;].*$/, '').trim().split(/\s+/);
    if (key === 'nameserver' && values[0] !== undefined && /^\d+\.\d+\.\d+\.\d+$/.test(values[0])) nameservers.push(values[0]);
    if (key === 'search') searchDomains = values.filter((v) => v !== '');
  }
  return { nameservers, searchDomains };
}
