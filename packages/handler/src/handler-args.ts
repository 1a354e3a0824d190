// The handler's command line, parsed without touching process.*: main.ts passes argv and env.

import { parseArgs } from 'node:util';
import { DEVICE_PLUGINS_DIR, NODE_API_SOCKET } from '@podvirt/proto';
import { DEFAULT_DEVICES_PER_PLUGIN } from './device-plugins/host-devices.js';
import { durationFlagMs, integerFlag, invalidArgs as invalid } from './flag-values.js';
import { HandlerError } from './handler-error.js';
import { DEFAULT_DOMAIN_STATS_TIMEOUT_MS } from './metrics/domain-stats-collector.js';
import { IO_ERROR_RETRY } from './reconcile/io-error-retry.js';
import { MIGRATION_OPTIONS, MIGRATION_USAGE, parseMigrationSettings, type MigrationSettings } from './live-migration/migration-settings.js';

export interface NodeApiTlsArgs {
  readonly address: string;
  readonly port: number;
  readonly certFile: string;
  readonly keyFile: string;
  readonly clientCaFile: string;
  /** `--tls-allowed-client` (repeatable): `CN=…`, `DNS:…`, `URI:…`, `email:…`, `IP Address:…`. */
  readonly allowedClients: readonly string[];
}

export interface HandlerArgs {
  /** Undefined: in-cluster config, else $KUBECONFIG or ~/.kube/config. */
  readonly kubeconfig: string | undefined;
  readonly nodeName: string;
  readonly podsDir: string;
  readonly workers: number;
  readonly watchdogMs: number;
  readonly resyncPeriodMs: number;
  readonly ghostRecordDir: string;
  readonly nodeApiSocket: string;
  readonly nodeApiTls: NodeApiTlsArgs | undefined;
  /** Bind address of the plain HTTP endpoints (/metrics, /healthz, /readyz). */
  readonly httpAddress: string;
  /** 0 picks a free port (it is logged). Equal ports share one listener. */
  readonly metricsPort: number;
  readonly healthPort: number;
  /** The bound on one scrape's reads of the launchers' domain stats (slower ones are left out). */
  readonly metricsScrapeTimeoutMs: number;
  /** The first wait between resumes of a VM paused again by an I/O error (doubling per round up to 3 min). */
  readonly ioErrorRetryIntervalMs: number;
  readonly heartbeatIntervalMs: number;
  /** Bound on finishing in-flight reconciles at SIGTERM. */
  readonly shutdownGraceMs: number;
  /** The kvm/tun/vhost-net device plugins; undefined with --disable-device-plugins. */
  readonly devicePlugins: DevicePluginArgs | undefined;
  /** How this node's handler runs the migrations whose source it is. */
  readonly migration: MigrationSettings;
  /** `--migration-tls-dir` (ca.crt, tls.crt, tls.key) and `--migration-address`; undefined: no migrations. */
  readonly migrationProxy: { readonly tlsDir: string; readonly address: string } | undefined;
}

export interface DevicePluginArgs {
  /** The kubelet's device-plugins directory (plugin sockets and kubelet.sock). */
  readonly dir: string;
  /** Where the host's /dev is seen from. */
  readonly deviceRoot: string;
  /** Device IDs each plugin advertises. */
  readonly maxDevices: number;
}

// Defaults from virt-handler: 10 VM workers, --watchdog-timeout 30s, a 300 s domain resync,
// metrics and health on 8443, a heartbeat every minute. The ghost records live in podvirt's
// own private host directory, beside KubeVirt's layout rather than inside it. The shutdown
// bound fits a DaemonSet pod's default 30 s grace with room for the unschedulable patch.
const DEFAULTS = {
  podsDir: '/pods',
  workers: '10',
  watchdog: '30s',
  resync: '5m',
  ghostRecordDir: '/var/run/podvirt-private/ghost-records',
  httpAddress: '127.0.0.1',
  port: '8443',
  metricsScrapeTimeout: `${DEFAULT_DOMAIN_STATS_TIMEOUT_MS / 1000}s`,
  ioErrorRetryInterval: `${IO_ERROR_RETRY.initialMs / 1000}s`,
  tlsAddress: '0.0.0.0',
  heartbeat: '1m',
  shutdownGrace: '15s',
  // Where the DaemonSet mounts the Secret with the migration certificates (KubeVirt mounts its
  // handler certificates under /etc/virt-handler/ the same way).
  migrationTlsDir: '/etc/podvirt-handler/migration-certificates',
} as const;

// Prometheus waits 10 s for a scrape by default and never longer than its scrape interval: a
// bound beyond a minute would only hold a scrape its client has given up on.
const MAX_SCRAPE_TIMEOUT = '1m';
const MAX_SCRAPE_TIMEOUT_MS = 60_000;

export const HANDLER_USAGE = `usage: podvirt-handler [--kubeconfig PATH] [--node-name NAME] [--pods-dir DIR]
                      [--workers N] [--watchdog-timeout DURATION] [--resync-period DURATION]
                      [--ghost-record-dir DIR] [--node-api-socket PATH]
                      [--node-api-tls-port PORT --tls-cert FILE --tls-key FILE --tls-client-ca FILE
                       --tls-allowed-client ID... [--node-api-tls-address ADDR]]
                      [--http-address ADDR] [--metrics-port PORT] [--health-port PORT]
                      [--metrics-scrape-timeout DURATION] [--io-error-retry-interval DURATION]
                      [--heartbeat-interval DURATION] [--shutdown-grace DURATION]
                      [--device-plugins-dir DIR] [--device-root DIR] [--max-devices N]
                      [--disable-device-plugins]
${MIGRATION_USAGE}
  --node-name defaults to $NODE_NAME; durations as Go writes them (1h30m, 90s, 300ms; a bare number is seconds).
  Defaults: --ghost-record-dir ${DEFAULTS.ghostRecordDir}, --node-api-socket ${NODE_API_SOCKET},
  --http-address ${DEFAULTS.httpAddress}, --metrics-port and --health-port ${DEFAULTS.port} (0: any free port),
  --metrics-scrape-timeout ${DEFAULTS.metricsScrapeTimeout} (at most ${MAX_SCRAPE_TIMEOUT}: the wait of one /metrics scrape for the launchers' domain stats),
  --io-error-retry-interval ${DEFAULTS.ioErrorRetryInterval} (at most ${IO_ERROR_RETRY.maxMs / 60_000}m: the first wait between resumes of a VM an I/O error paused again, doubling per round),
  --device-plugins-dir ${DEVICE_PLUGINS_DIR}, --device-root / (the host's /dev is <root>/dev), --max-devices ${DEFAULT_DEVICES_PER_PLUGIN},
  --migration-tls-dir ${DEFAULTS.migrationTlsDir} (ca.crt, tls.crt, tls.key; used once --migration-address turns migration on).`;

const OPTIONS = {
  kubeconfig: { type: 'string' },
  'node-name': { type: 'string' },
  'pods-dir': { type: 'string', default: DEFAULTS.podsDir },
  workers: { type: 'string', default: DEFAULTS.workers },
  'watchdog-timeout': { type: 'string', default: DEFAULTS.watchdog },
  'resync-period': { type: 'string', default: DEFAULTS.resync },
  'ghost-record-dir': { type: 'string', default: DEFAULTS.ghostRecordDir },
  'node-api-socket': { type: 'string', default: NODE_API_SOCKET },
  'node-api-tls-port': { type: 'string' },
  'node-api-tls-address': { type: 'string', default: DEFAULTS.tlsAddress },
  'tls-cert': { type: 'string' },
  'tls-key': { type: 'string' },
  'tls-client-ca': { type: 'string' },
  'tls-allowed-client': { type: 'string', multiple: true },
  'http-address': { type: 'string', default: DEFAULTS.httpAddress },
  'metrics-port': { type: 'string', default: DEFAULTS.port },
  'health-port': { type: 'string', default: DEFAULTS.port },
  'metrics-scrape-timeout': { type: 'string', default: DEFAULTS.metricsScrapeTimeout },
  'io-error-retry-interval': { type: 'string', default: DEFAULTS.ioErrorRetryInterval },
  'heartbeat-interval': { type: 'string', default: DEFAULTS.heartbeat },
  'shutdown-grace': { type: 'string', default: DEFAULTS.shutdownGrace },
  'device-plugins-dir': { type: 'string', default: DEVICE_PLUGINS_DIR },
  'device-root': { type: 'string', default: '/' },
  'max-devices': { type: 'string', default: String(DEFAULT_DEVICES_PER_PLUGIN) },
  'disable-device-plugins': { type: 'boolean', default: false },
  ...MIGRATION_OPTIONS,
  'migration-tls-dir': { type: 'string', default: DEFAULTS.migrationTlsDir },
  'migration-address': { type: 'string' },
} as const;

export function parseHandlerArgs(argv: readonly string[], env: Readonly<Record<string, string | undefined>>): HandlerArgs {
  let values;
  try {
    ({ values } = parseArgs({ args: [...argv], options: OPTIONS, strict: true, allowPositionals: false }));
  } catch (err) {
    throw new HandlerError('HANDLER_ERR_INVALID_ARGS', (err as Error).message, { cause: err });
  }
  const nodeName = values['node-name'] ?? env['NODE_NAME'];
  if (nodeName === undefined || nodeName === '') throw invalid('--node-name or NODE_NAME is required');
  const workers = integerFlag('--workers', values.workers, { min: 1 });
  return {
    kubeconfig: values.kubeconfig,
    nodeName,
    podsDir: values['pods-dir'],
    workers,
    watchdogMs: parseDuration('--watchdog-timeout', values['watchdog-timeout']),
    resyncPeriodMs: parseDuration('--resync-period', values['resync-period']),
    ghostRecordDir: values['ghost-record-dir'],
    nodeApiSocket: values['node-api-socket'],
    nodeApiTls: tlsArgs(values),
    httpAddress: values['http-address'],
    metricsPort: parsePort('--metrics-port', values['metrics-port']),
    healthPort: parsePort('--health-port', values['health-port']),
    metricsScrapeTimeoutMs: parseScrapeTimeout(values['metrics-scrape-timeout']),
    ioErrorRetryIntervalMs: parseIoErrorRetryInterval(values['io-error-retry-interval']),
    heartbeatIntervalMs: parseDuration('--heartbeat-interval', values['heartbeat-interval']),
    shutdownGraceMs: parseDuration('--shutdown-grace', values['shutdown-grace']),
    devicePlugins: values['disable-device-plugins'] ? undefined : {
      dir: values['device-plugins-dir'],
      deviceRoot: values['device-root'],
      maxDevices: parseMaxDevices(values['max-devices']),
    },
    migration: parseMigrationSettings(values),
    migrationProxy: migrationProxyArgs(values['migration-tls-dir'], values['migration-address'], argv.some((a) => a === '--migration-tls-dir' || a.startsWith('--migration-tls-dir='))),
  };
}

// The proxy needs both: the certificates to speak TLS and the address the target listens on
// and advertises (the DaemonSet's status.podIP). The address turns migration on; the directory
// has a default, the Secret's mount path.
function migrationProxyArgs(tlsDir: string, address: string | undefined, tlsDirGiven: boolean): HandlerArgs['migrationProxy'] {
  if (address === undefined && !tlsDirGiven) return undefined;
  if (address === undefined || tlsDir === '' || address === '') throw invalid(`--migration-tls-dir and --migration-address go together (live migration needs both; the directory defaults to ${DEFAULTS.migrationTlsDir})`);
  return { tlsDir, address };
}

// A device ID list is sent whole on every health change; the kubelet has no stated limit, but a
// count beyond 100,000 is a typo, not a node.
function parseMaxDevices(text: string): number {
  return integerFlag('--max-devices', text, { min: 1, max: 100_000 });
}

type Values = Partial<Record<'node-api-tls-port' | 'node-api-tls-address' | 'tls-cert' | 'tls-key' | 'tls-client-ca', string>> & {
  readonly 'tls-allowed-client'?: readonly string[] | undefined;
};

function tlsArgs(values: Values): NodeApiTlsArgs | undefined {
  const files = { certFile: values['tls-cert'], keyFile: values['tls-key'], clientCaFile: values['tls-client-ca'] };
  const port = values['node-api-tls-port'];
  const allowedClients = values['tls-allowed-client'] ?? [];
  if (port === undefined) {
    if (Object.values(files).some((f) => f !== undefined) || allowedClients.length > 0) {
      throw invalid('--tls-cert, --tls-key, --tls-client-ca and --tls-allowed-client need --node-api-tls-port');
    }
    return undefined;
  }
  const { certFile, keyFile, clientCaFile } = files;
  // Client certificates are what authenticate a TLS caller, so the CA is not optional.
  if (certFile === undefined || keyFile === undefined || clientCaFile === undefined) {
    throw invalid('--node-api-tls-port needs --tls-cert, --tls-key and --tls-client-ca');
  }
  // Every certificate the CA signed (the server's own too) would otherwise be let in.
  if (allowedClients.length === 0) throw invalid('--node-api-tls-port needs at least one --tls-allowed-client (e.g. CN=podvirtctl)');
  const bad = allowedClients.find((id) => !/^(CN=|DNS:|URI:|email:|IP Address:)./.test(id));
  if (bad !== undefined) throw invalid(`--tls-allowed-client ${JSON.stringify(bad)}: write CN=<name>, DNS:<name>, URI:<uri>, email:<address> or IP Address:<ip>`);
  return {
    address: values['node-api-tls-address'] ?? DEFAULTS.tlsAddress, port: parsePort('--node-api-tls-port', port),
    certFile, keyFile, clientCaFile, allowedClients,
  };
}

function parseScrapeTimeout(text: string): number {
  const ms = parseDuration('--metrics-scrape-timeout', text);
  if (ms > MAX_SCRAPE_TIMEOUT_MS) throw invalid(`--metrics-scrape-timeout: at most ${MAX_SCRAPE_TIMEOUT}, got ${text}`);
  return ms;
}

// The wait doubles per round up to the longest (KubeVirt's 3 min); a first wait beyond it would
// never double.
function parseIoErrorRetryInterval(text: string): number {
  const ms = parseDuration('--io-error-retry-interval', text);
  if (ms > IO_ERROR_RETRY.maxMs) throw invalid(`--io-error-retry-interval: at most ${IO_ERROR_RETRY.maxMs / 60_000}m, got ${text}`);
  return ms;
}

function parsePort(flag: string, text: string): number {
  return integerFlag(flag, text, { max: 65_535 });
}

/** A duration flag in the one grammar; every one of the handler's is a period or a bound, so 0 is refused. */
export function parseDuration(flag: string, text: string): number {
  const ms = durationFlagMs(flag, text);
  if (ms <= 0) throw invalid(`${flag}: must be more than 0, got ${text}`);
  return ms;
}

/** Every flag podvirt-handler takes, as parseArgs reads them (the docs check lists them against the READMEs). */
export const HANDLER_OPTIONS = OPTIONS;
