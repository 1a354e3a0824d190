// Command-line flags of podvirt-api. Parsing is pure so it can be tested; main.ts supplies argv.

import { parseArgs } from 'node:util';
import { EVICTION_STRATEGIES, isEvictionStrategy, type EvictionStrategy } from '@podvirt/api';
import { GoFlagError, parseDurationFlag, parseIntegerFlag } from '@podvirt/api/go-flags';
import { PodvirtApiError } from './api-error.js';
import { checkPolicy, type RotationPolicy } from './tls/rotation-plan.js';

export interface ApiFlags {
  readonly kubeconfig: string | undefined;
  /** Where podvirt-api runs: its Service and its certificates' Secret are here. */
  readonly namespace: string;
  readonly logLevel: string;
  /** The HTTPS port kube-apiserver calls (webhooks). */
  readonly bindAddress: string;
  readonly securePort: number;
  /** Plain-HTTP /metrics, /healthz, /readyz. */
  readonly httpAddress: string;
  readonly metricsPort: number;
  readonly serviceName: string;
  readonly tlsSecretName: string;
  /** Names the serving certificate covers besides the Service's DNS names. */
  readonly tlsSans: readonly string[];
  readonly validatingWebhookConfiguration: string;
  readonly mutatingWebhookConfiguration: string;
  readonly rotation: RotationPolicy;
  /** The cluster's eviction strategy, for a VMI that names none (the same as podvirt-controller's). */
  readonly evictionStrategy: EvictionStrategy;
  /** The handlers' node API, for the subresource API; undefined when neither files nor Secrets are given. */
  readonly handlerApi: HandlerApiFlags | undefined;
}

export interface HandlerApiFlags {
  /** Files: the CA the handlers' certificates are checked against, podvirt-api's client pair. */
  readonly files?: { readonly caFile: string; readonly certFile: string; readonly keyFile: string } | undefined;
  /** Or made by podvirt-api: its node API CA's Secret, and the Secret the handlers mount. */
  readonly secrets?: { readonly caSecret: string; readonly handlerSecret: string } | undefined;
  /** The handlers' TLS port, on their pods' IPs. */
  readonly port: number;
  /** Node name → host:port, instead of the handler pod's IP. */
  readonly addresses: ReadonlyMap<string, string>;
}

/** The flags naming the Secrets of the node API's certificates podvirt-api makes (the shipped Deployment's). */
export const NODE_API_SECRET_FLAGS = ['--node-api-ca-secret', '--handler-tls-secret'] as const;

/** virt-api serves on 8443. */
export const DEFAULT_SECURE_PORT = 8443;
export const DEFAULT_METRICS_PORT = 8080;
/** virt-handler serves virt-api on 8186. */
export const DEFAULT_HANDLER_PORT = 8186;

/** Every flag podvirt-api takes, as parseArgs reads them (the docs check lists them against the README). */
export const API_OPTIONS = {
  kubeconfig: { type: 'string' },
  namespace: { type: 'string', default: 'podvirt' },
  'log-level': { type: 'string', default: 'info' },
  'bind-address': { type: 'string', default: '0.0.0.0' },
  'secure-port': { type: 'string', default: String(DEFAULT_SECURE_PORT) },
  'http-address': { type: 'string', default: '127.0.0.1' },
  'metrics-port': { type: 'string', default: String(DEFAULT_METRICS_PORT) },
  'service-name': { type: 'string', default: 'podvirt-api' },
  'tls-secret-name': { type: 'string', default: 'podvirt-api-certs' },
  'tls-san': { type: 'string', multiple: true, default: [] as string[] },
  'validating-webhook-configuration': { type: 'string', default: 'podvirt-api-validator' },
  'mutating-webhook-configuration': { type: 'string', default: 'podvirt-api-mutator' },
  'ca-duration': { type: 'string', default: '168h' },
  'ca-renew-before': { type: 'string', default: '48h' },
  'cert-duration': { type: 'string', default: '24h' },
  'cert-renew-before': { type: 'string', default: '12h' },
  'eviction-strategy': { type: 'string', default: 'None' },
  'handler-ca': { type: 'string' },
  'handler-client-cert': { type: 'string' },
  'handler-client-key': { type: 'string' },
  'node-api-ca-secret': { type: 'string' },
  'handler-tls-secret': { type: 'string' },
  'handler-port': { type: 'string', default: String(DEFAULT_HANDLER_PORT) },
  'handler-address': { type: 'string', multiple: true, default: [] as string[] },
} as const;

function bad(message: string, cause?: unknown): PodvirtApiError {
  return new PodvirtApiError('PODVIRT_API_ERR_BAD_FLAG', message, cause === undefined ? undefined : { cause });
}

export function parseApiFlags(argv: readonly string[]): ApiFlags {
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], strict: true, allowPositionals: false, options: API_OPTIONS });
  } catch (err) {
    throw bad(err instanceof Error ? err.message : String(err), err);
  }
  const v = parsed.values;
  try {
    const rotation: RotationPolicy = {
      caDurationMs: parseDurationFlag('ca-duration', v['ca-duration']),
      caRenewBeforeMs: parseDurationFlag('ca-renew-before', v['ca-renew-before']),
      certDurationMs: parseDurationFlag('cert-duration', v['cert-duration']),
      certRenewBeforeMs: parseDurationFlag('cert-renew-before', v['cert-renew-before']),
    };
    const policyProblem = checkPolicy(rotation);
    if (policyProblem !== undefined) throw bad(`--ca-duration, --ca-renew-before, --cert-duration, --cert-renew-before: ${policyProblem}`);
    const sans = v['tls-san'].flatMap((s) => s.split(',')).map((s) => s.trim()).filter((s) => s !== '');
    for (const san of sans) {
      if (!/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$|^[\d.]+$|^[0-9a-fA-F:]+$/.test(san)) throw bad(`--tls-san: ${JSON.stringify(san)} is neither a DNS name nor an IP address`);
    }
    const evictionStrategy = v['eviction-strategy'];
    if (!isEvictionStrategy(evictionStrategy)) throw bad(`--eviction-strategy: ${JSON.stringify(evictionStrategy)} is not one of ${EVICTION_STRATEGIES.join(', ')}`);
    return {
      kubeconfig: v.kubeconfig,
      namespace: v.namespace,
      logLevel: v['log-level'],
      bindAddress: v['bind-address'],
      securePort: parseIntegerFlag('secure-port', v['secure-port'], { min: 0, max: 65_535 }),
      httpAddress: v['http-address'],
      metricsPort: parseIntegerFlag('metrics-port', v['metrics-port'], { min: 0, max: 65_535 }),
      serviceName: v['service-name'],
      tlsSecretName: v['tls-secret-name'],
      tlsSans: sans,
      validatingWebhookConfiguration: v['validating-webhook-configuration'],
      mutatingWebhookConfiguration: v['mutating-webhook-configuration'],
      rotation,
      evictionStrategy,
      handlerApi: handlerApiFlags(v),
    };
  } catch (err) {
    if (err instanceof GoFlagError) throw bad(err.message, err);
    throw err;
  }
}

type HandlerValues = Partial<Record<'handler-ca' | 'handler-client-cert' | 'handler-client-key' | 'node-api-ca-secret' | 'handler-tls-secret', string>> & { 'handler-port': string; 'handler-address': string[] };

function handlerApiFlags(v: HandlerValues): HandlerApiFlags | undefined {
  const files = together(v, ['handler-ca', 'handler-client-cert', 'handler-client-key']);
  const secrets = together(v, ['node-api-ca-secret', 'handler-tls-secret']);
  if (files !== undefined && secrets !== undefined) throw bad('--handler-ca, --handler-client-cert, --handler-client-key: not with --node-api-ca-secret and --handler-tls-secret (files, or certificates podvirt-api makes)');
  if (files === undefined && secrets === undefined) {
    if (v['handler-address'].length > 0) throw bad('--handler-address: needs --node-api-ca-secret and --handler-tls-secret, or --handler-ca, --handler-client-cert and --handler-client-key');
    return undefined;
  }
  for (const [flag, name] of Object.entries(secrets ?? {})) {
    if (!/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(name) || name.length > 253) throw bad(`--${flag}: ${JSON.stringify(name)} is not a Secret name`);
  }
  if (secrets !== undefined && secrets['node-api-ca-secret'] === secrets['handler-tls-secret']) throw bad('--handler-tls-secret: must differ from --node-api-ca-secret (the handlers must not get the CA key)');
  const addresses = new Map<string, string>();
  for (const entry of v['handler-address']) {
    const m = /^([a-z0-9]([-a-z0-9.]*[a-z0-9])?)=(\[[0-9a-fA-F:]+\]|[^:=\s]+):(\d{1,5})$/.exec(entry);
    if (m === null) throw bad(`--handler-address: ${JSON.stringify(entry)} is not NODE=HOST:PORT`);
    addresses.set(m[1] ?? '', `${m[3] ?? ''}:${m[4] ?? ''}`);
  }
  return {
    ...(files === undefined ? {} : { files: { caFile: files['handler-ca'] ?? '', certFile: files['handler-client-cert'] ?? '', keyFile: files['handler-client-key'] ?? '' } }),
    ...(secrets === undefined ? {} : { secrets: { caSecret: secrets['node-api-ca-secret'] ?? '', handlerSecret: secrets['handler-tls-secret'] ?? '' } }),
    port: parseIntegerFlag('handler-port', v['handler-port'], { min: 1, max: 65_535 }),
    addresses,
  };
}

/** Flags that go together: all given (their values), none (undefined), or a BAD_FLAG naming the missing. */
function together<K extends keyof HandlerValues>(v: HandlerValues, flags: readonly K[]): Partial<Record<K, string>> | undefined {
  const given = flags.filter((f) => v[f] !== undefined);
  if (given.length === 0) return undefined;
  const missing = flags.filter((f) => v[f] === undefined).map((f) => `--${f}`);
  if (missing.length > 0) throw bad(`${missing.join(', ')}: needed with --${given[0] ?? ''} (${flags.map((f) => `--${f}`).join(', ')} go together)`);
  return Object.fromEntries(flags.map((f) => [f, v[f]])) as unknown as Partial<Record<K, string>>;
}

/** The names the serving certificate covers: the Service's DNS names, then `--tls-san`. */
export function servingNames(flags: Pick<ApiFlags, 'serviceName' | 'namespace' | 'tlsSans'>): string[] {
  const svc = `${flags.serviceName}.${flags.namespace}.svc`;
  return [...new Set([svc, `${svc}.cluster.local`, `${flags.serviceName}.${flags.namespace}`, ...flags.tlsSans])];
}
