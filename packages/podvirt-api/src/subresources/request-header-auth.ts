// Who is calling: kube-apiserver's aggregation layer authenticates the user, then calls us with
// its front-proxy client certificate and the user in X-Remote-User / -Group / -Extra-*. Those
// headers are believed only from a certificate signed by the requestheader CA and named in the
// allowed names, all read from kube-system/extension-apiserver-authentication (what
// kube-apiserver publishes for extension API servers).

import { X509Certificate } from 'node:crypto';
import { ResourceClient, type KubeClient, type KubeResource } from '@podvirt/kube-runtime';
import { kubeStatus, type KubeStatus } from './kube-status.js';

const CONFIG_MAPS: KubeResource = { group: '', version: 'v1', plural: 'configmaps', namespaced: true };
export const AUTHENTICATION_CONFIG_MAP = { namespace: 'kube-system', name: 'extension-apiserver-authentication' } as const;
const CLIENT_AUTH_EKU = '1.3.6.1.5.5.7.3.2';
/** How long a read of the ConfigMap is trusted: a rotated front-proxy CA is picked up within this. */
export const REQUEST_HEADER_REFRESH_MS = 60_000;

export interface RequestHeaderConfig {
  readonly cas: readonly X509Certificate[];
  /** Empty: any certificate the CA signed. */
  readonly allowedNames: readonly string[];
  readonly usernameHeaders: readonly string[];
  readonly groupHeaders: readonly string[];
  readonly extraPrefixes: readonly string[];
}

export interface CallingUser {
  readonly name: string;
  readonly groups: readonly string[];
  readonly extra: Readonly<Record<string, readonly string[]>>;
}

export type Authentication = { readonly ok: true; readonly user: CallingUser } | { readonly ok: false; readonly status: KubeStatus };

/** The ConfigMap's data as kube-apiserver writes it; a key it lacks or cannot parse is named. */
export function parseRequestHeaderConfig(data: Readonly<Record<string, string>>): RequestHeaderConfig | string {
  const caPem = data['requestheader-client-ca-file'];
  if (caPem === undefined) return 'requestheader-client-ca-file is missing (kube-apiserver runs without --requestheader-client-ca-file)';
  const cas: X509Certificate[] = [];
  for (const block of caPem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? []) {
    try {
      cas.push(new X509Certificate(block));
    } catch (err) {
      return `requestheader-client-ca-file: ${err instanceof Error ? err.message : String(err)}`;
    }
  }
  if (cas.length === 0) return 'requestheader-client-ca-file holds no certificate';
  const lists: Record<string, string[]> = {};
  for (const key of ['requestheader-allowed-names', 'requestheader-username-headers', 'requestheader-group-headers', 'requestheader-extra-headers-prefix']) {
    const text = data[key];
    let parsed: unknown = [];
    try {
      if (text !== undefined && text !== '') parsed = JSON.parse(text);
    } catch {
      return `${key} is not a JSON list`;
    }
    if (!Array.isArray(parsed) || !parsed.every((v) => typeof v === 'string')) return `${key} is not a JSON list of strings`;
    lists[key] = parsed;
  }
  const usernameHeaders = (lists['requestheader-username-headers'] ?? []).map((h) => h.toLowerCase());
  if (usernameHeaders.length === 0) return 'requestheader-username-headers is empty';
  return {
    cas,
    allowedNames: lists['requestheader-allowed-names'] ?? [],
    usernameHeaders,
    groupHeaders: (lists['requestheader-group-headers'] ?? []).map((h) => h.toLowerCase()),
    extraPrefixes: (lists['requestheader-extra-headers-prefix'] ?? []).map((h) => h.toLowerCase()),
  };
}

/** Each header's values, one per line received (Node's `headersDistinct`: groups come one per line). */
export type DistinctHeaders = Readonly<Record<string, readonly string[] | undefined>>;

/** The user the front proxy names, if `peer` is the front proxy; otherwise why not (401). */
export function authenticate(peer: X509Certificate | undefined, headers: DistinctHeaders, config: RequestHeaderConfig, now: Date): Authentication {
  const refuse = (why: string): Authentication => ({ ok: false, status: kubeStatus(401, `Unauthorized: ${why}`) });
  if (peer === undefined) return refuse('no client certificate: call through kube-apiserver (the aggregation layer)');
  if (!config.cas.some((ca) => peer.checkIssued(ca) && peer.verify(ca.publicKey))) return refuse('the client certificate is not signed by the requestheader CA');
  if (now < new Date(peer.validFrom) || now > new Date(peer.validTo)) return refuse('the client certificate is not valid now');
  const eku = peer.keyUsage;
  if (eku !== undefined && !eku.includes(CLIENT_AUTH_EKU)) return refuse('the client certificate is not for client authentication');
  const cn = /(?:^|\n)CN=([^\n]*)/.exec(peer.subject)?.[1] ?? '';
  if (config.allowedNames.length > 0 && !config.allowedNames.includes(cn)) return refuse(`the client certificate's CN ${JSON.stringify(cn)} is not among requestheader-allowed-names`);
  const name = firstHeader(headers, config.usernameHeaders);
  if (name === undefined || name === '') return refuse(`no user in ${config.usernameHeaders.join(', ')}`);
  const groups = config.groupHeaders.flatMap((h) => headerValues(headers, h));
  const extra: Record<string, string[]> = {};
  for (const [header, value] of Object.entries(headers)) {
    const prefix = config.extraPrefixes.find((p) => header.startsWith(p));
    if (prefix === undefined || value === undefined) continue;
    const key = decodeURIComponent(header.slice(prefix.length)).toLowerCase();
    (extra[key] ??= []).push(...value);
  }
  return { ok: true, user: { name, groups, extra } };
}

function headerValues(headers: DistinctHeaders, name: string): readonly string[] {
  return headers[name] ?? [];
}

function firstHeader(headers: DistinctHeaders, names: readonly string[]): string | undefined {
  for (const n of names) {
    const v = headerValues(headers, n)[0];
    if (v !== undefined) return v;
  }
  return undefined;
}

/** The ConfigMap read through the API, kept for REQUEST_HEADER_REFRESH_MS. */
export class RequestHeaderSource {
  readonly #configMaps: ResourceClient<{ metadata?: { name?: string }; data?: Record<string, string> }>;
  readonly #now: () => number;
  #cached: { readonly at: number; readonly config: RequestHeaderConfig | string } | undefined;

  constructor(client: KubeClient, now: () => number = Date.now) {
    this.#configMaps = new ResourceClient(client, CONFIG_MAPS);
    this.#now = now;
  }

  /** The configuration, or why there is none (a missing ConfigMap: the API server has no aggregation layer). */
  async current(signal?: AbortSignal): Promise<RequestHeaderConfig | string> {
    const now = this.#now();
    if (this.#cached !== undefined && now - this.#cached.at < REQUEST_HEADER_REFRESH_MS) return this.#cached.config;
    const cm = await this.#configMaps.get(AUTHENTICATION_CONFIG_MAP.namespace, AUTHENTICATION_CONFIG_MAP.name, signal);
    const config = cm === undefined
      ? `no ConfigMap ${AUTHENTICATION_CONFIG_MAP.namespace}/${AUTHENTICATION_CONFIG_MAP.name}: the API server publishes no requestheader configuration`
      : parseRequestHeaderConfig(cm.data ?? {});
    this.#cached = { at: now, config };
    return config;
  }
}
