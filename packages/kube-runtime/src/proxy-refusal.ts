// podvirt's client connects to the API server directly; it does not tunnel through an HTTP(S)
// proxy. client-go would honour HTTPS_PROXY / HTTP_PROXY (and a kubeconfig's proxy-url), so a
// process that silently ignored them could reach a different network path than kubectl does.
// Instead, a proxy setting that would apply to the server is refused with what to change.

import { isIP } from 'node:net';
import { KubeClientError } from './kube-client-error.js';

export function refuseEnvironmentProxy(server: string, env: Readonly<Record<string, string | undefined>>): void {
  const url = new URL(server);
  const names = url.protocol === 'https:' ? ['HTTPS_PROXY', 'https_proxy'] : ['HTTP_PROXY', 'http_proxy'];
  const name = names.find((n) => (env[n] ?? '') !== '');
  if (name === undefined) return;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const noProxy = env['NO_PROXY'] ?? env['no_proxy'] ?? '';
  if (bypassed(host, url.port, noProxy)) return;
  throw new KubeClientError(
    'KUBE_ERR_PROXY',
    `${name} is set and ${host} is not in NO_PROXY, but podvirt does not connect to the API server through a proxy; ` +
      `add ${host} to NO_PROXY or unset ${name} for this process`,
  );
}

/** Go's NO_PROXY rules, reduced: `*`, exact hosts (with an optional port), domain suffixes, IPv4/IPv6 CIDRs. */
export function bypassed(host: string, port: string, noProxy: string): boolean {
  for (const raw of noProxy.split(',')) {
    const entry = raw.trim().toLowerCase();
    if (entry === '') continue;
    if (entry === '*') return true;
    if (entry.includes('/')) {
      if (inCidr(host, entry)) return true;
      continue;
    }
    const [entryHost = '', entryPort] = splitHostPort(entry);
    if (entryPort !== undefined && entryPort !== port) continue;
    const h = host.toLowerCase();
    if (h === entryHost.replace(/^\./, '') || h.endsWith(entryHost.startsWith('.') ? entryHost : `.${entryHost}`)) return true;
  }
  return false;
}

function splitHostPort(entry: string): [string, string | undefined] {
  const bracketed = /^\[(.+)\](?::(\d+))?$/.exec(entry);
  if (bracketed) return [bracketed[1] ?? '', bracketed[2]];
  if (isIP(entry) === 6) return [entry, undefined];
  const i = entry.lastIndexOf(':');
  return i > 0 && /^\d+$/.test(entry.slice(i + 1)) ? [entry.slice(0, i), entry.slice(i + 1)] : [entry, undefined];
}

function inCidr(host: string, cidr: string): boolean {
  const [base = '', bitsText = ''] = cidr.split('/');
  const family = isIP(base);
  if (family === 0 || isIP(host) !== family) return false;
  const bits = Number(bitsText);
  const a = ipBits(host, family);
  const b = ipBits(base, family);
  return Number.isInteger(bits) && bits >= 0 && a.slice(0, bits) === b.slice(0, bits);
}

/** The address as a string of 32 or 128 '0'/'1' characters. */
function ipBits(ip: string, family: number): string {
  if (family === 4) return ip.split('.').map((o) => Number(o).toString(2).padStart(8, '0')).join('');
  const [head = '', tail = ''] = ip.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === '' ? [] : tail.split(':');
  const groups = ip.includes('::') ? [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right] : left;
  return groups.map((g) => parseInt(g, 16).toString(2).padStart(16, '0')).join('');
}
