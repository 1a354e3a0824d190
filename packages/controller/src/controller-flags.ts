// Command-line flags of podvirt-controller. Parsing is pure so it can be tested; main.ts
// supplies argv and the environment.

import { parseArgs } from 'node:util';
import { EVICTION_STRATEGIES, isEvictionStrategy, type EvictionStrategy } from '@podvirt/api';
import { GoFlagError, parseDurationFlag, parseIntegerFlag } from '@podvirt/api/go-flags';
import { ControllerError } from './controller-error.js';
import { checkAllowedDir, HOST_DISK_GATE, type HostDiskPolicy } from './decide/host-disk-policy.js';
import { DEFAULT_UNSCHEDULABLE_TIMEOUT_MS } from './decide/decide-migration.js';
import { DEFAULT_NODE_HEARTBEAT_TIMEOUT_MS } from './decide/node-heartbeat.js';
import { DEFAULT_LEASE_DURATION_MS, DEFAULT_RENEW_DEADLINE_MS, DEFAULT_RETRY_PERIOD_MS, type LeaderElectionTimings } from './leader/leader-elector.js';

export interface ControllerFlags {
  readonly kubeconfig: string | undefined;
  readonly launcherImage: string | undefined;
  readonly allowEmulation: boolean;
  readonly namespace: string | undefined;
  readonly workers: number;
  readonly leaderElect: boolean;
  readonly leaseNamespace: string;
  readonly leaseName: string;
  /** `--leader-elect-lease-duration`, `--leader-elect-renew-deadline`, `--leader-elect-retry-period`. */
  readonly leaderElection: LeaderElectionTimings;
  readonly logLevel: string;
  /** Bind address of /metrics, /healthz and /readyz. */
  readonly httpAddress: string;
  /** Their port; 0 picks a free one (logged). */
  readonly metricsPort: number;
  /** `--feature-gates` (HostDisk) and `--host-disk-allowed-dir`. */
  readonly hostDisk: HostDiskPolicy;
  /** The cluster's eviction strategy, for a VMI that names none (KubeVirt's `evictionStrategy` setting). */
  readonly evictionStrategy: EvictionStrategy;
  /** `--node-heartbeat-timeout`: a handler silent this long makes its node unresponsive. */
  readonly nodeHeartbeatTimeoutMs: number;
  /** `--migration-unschedulable-timeout`: a migration whose target pod no node takes fails after this long. */
  readonly migrationUnschedulableTimeoutMs: number;
}

/** The gates `--feature-gates` knows, by KubeVirt's names. */
const FEATURE_GATES: readonly string[] = [HOST_DISK_GATE];

/**
 * `--feature-gates=HostDisk` (KubeVirt's list of names) or `HostDisk=true` (a Kubernetes
 * component's map): both spellings, comma-separated; an unknown gate is an error.
 */
function parseFeatureGates(values: readonly string[]): ReadonlySet<string> {
  const on = new Set<string>();
  for (const item of values.flatMap((v) => v.split(',')).map((v) => v.trim()).filter((v) => v !== '')) {
    const [name = '', value = 'true', ...rest] = item.split('=');
    if (!FEATURE_GATES.includes(name)) {
      throw new ControllerError('CONTROLLER_ERR_BAD_FLAG', `--feature-gates: unknown feature gate ${JSON.stringify(name)}; known: ${FEATURE_GATES.join(', ')}`);
    }
    if (rest.length > 0 || (value !== 'true' && value !== 'false')) {
      throw new ControllerError('CONTROLLER_ERR_BAD_FLAG', `--feature-gates: ${JSON.stringify(item)} must be ${name} or ${name}=true|false`);
    }
    if (value === 'true') on.add(name);
    else on.delete(name);
  }
  return on;
}

/** KubeVirt's virt-controller runs 3 VMI workers by default. */
export const DEFAULT_WORKERS = 3;

/** virt-controller serves its metrics on 8443 too. */
export const DEFAULT_METRICS_PORT = 8443;

/** Every flag podvirt-controller takes, as parseArgs reads them (the docs check lists them against the READMEs). */
export const CONTROLLER_OPTIONS = {
  kubeconfig: { type: 'string' },
  'launcher-image': { type: 'string' },
  'allow-emulation': { type: 'boolean', default: false },
  namespace: { type: 'string' },
  workers: { type: 'string', default: String(DEFAULT_WORKERS) },
  'leader-elect': { type: 'boolean', default: false },
  'lease-namespace': { type: 'string', default: 'kube-system' },
  'lease-name': { type: 'string', default: 'podvirt-controller' },
  'leader-elect-lease-duration': { type: 'string', default: `${DEFAULT_LEASE_DURATION_MS / 1000}s` },
  'leader-elect-renew-deadline': { type: 'string', default: `${DEFAULT_RENEW_DEADLINE_MS / 1000}s` },
  'leader-elect-retry-period': { type: 'string', default: `${DEFAULT_RETRY_PERIOD_MS / 1000}s` },
  'log-level': { type: 'string', default: 'info' },
  'http-address': { type: 'string', default: '127.0.0.1' },
  'metrics-port': { type: 'string', default: String(DEFAULT_METRICS_PORT) },
  'feature-gates': { type: 'string', multiple: true, default: [] as string[] },
  'host-disk-allowed-dir': { type: 'string', multiple: true, default: [] as string[] },
  'eviction-strategy': { type: 'string', default: 'None' },
  'node-heartbeat-timeout': { type: 'string', default: `${DEFAULT_NODE_HEARTBEAT_TIMEOUT_MS / 60_000}m` },
  'migration-unschedulable-timeout': { type: 'string', default: `${DEFAULT_UNSCHEDULABLE_TIMEOUT_MS / 60_000}m` },
} as const;

/** A Lease records its duration in whole seconds, so a shorter one would not mean what it says. */
const MIN_LEASE_DURATION_MS = 1000;

/**
 * The three leader-election durations, checked against each other as client-go checks them: the
 * lease outlasts the renew deadline (else a replica could take over from a leader that still
 * thinks it leads), and the renew deadline leaves room for more than one retry.
 */
function parseLeaderElectionTimings(v: { readonly [K in 'leader-elect-lease-duration' | 'leader-elect-renew-deadline' | 'leader-elect-retry-period']: string }): LeaderElectionTimings {
  let leaseDurationMs: number;
  let renewDeadlineMs: number;
  let retryPeriodMs: number;
  try {
    leaseDurationMs = parseDurationFlag('leader-elect-lease-duration', v['leader-elect-lease-duration']);
    renewDeadlineMs = parseDurationFlag('leader-elect-renew-deadline', v['leader-elect-renew-deadline']);
    retryPeriodMs = parseDurationFlag('leader-elect-retry-period', v['leader-elect-retry-period']);
  } catch (err) {
    if (err instanceof GoFlagError) throw new ControllerError('CONTROLLER_ERR_BAD_FLAG', err.message, { cause: err });
    throw err;
  }
  const bad = (message: string): never => {
    throw new ControllerError('CONTROLLER_ERR_BAD_FLAG', message);
  };
  if (leaseDurationMs < MIN_LEASE_DURATION_MS || leaseDurationMs % 1000 !== 0) {
    bad(`--leader-elect-lease-duration must be a whole number of seconds, at least 1s (a Lease stores seconds), got ${v['leader-elect-lease-duration']}`);
  }
  if (retryPeriodMs <= 0) bad(`--leader-elect-retry-period must be more than 0, got ${v['leader-elect-retry-period']}`);
  if (renewDeadlineMs >= leaseDurationMs) {
    bad(`--leader-elect-renew-deadline (${v['leader-elect-renew-deadline']}) must be shorter than --leader-elect-lease-duration (${v['leader-elect-lease-duration']})`);
  }
  if (renewDeadlineMs <= RETRY_JITTER * retryPeriodMs) {
    bad(`--leader-elect-renew-deadline (${v['leader-elect-renew-deadline']}) must be longer than ${RETRY_JITTER} × --leader-elect-retry-period (${v['leader-elect-retry-period']})`);
  }
  return { leaseDurationMs, renewDeadlineMs, retryPeriodMs };
}

/** client-go's leader election refuses a renew deadline within this factor of the retry period. */
const RETRY_JITTER = 1.2;

export function parseControllerFlags(argv: readonly string[]): ControllerFlags {
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], strict: true, allowPositionals: false, options: CONTROLLER_OPTIONS });
  } catch (err) {
    throw new ControllerError('CONTROLLER_ERR_BAD_FLAG', err instanceof Error ? err.message : String(err), { cause: err });
  }
  const v = parsed.values;
  let workers: number;
  try {
    workers = parseIntegerFlag('workers', v.workers, { min: 1, max: 64 });
  } catch (err) {
    if (err instanceof GoFlagError) throw new ControllerError('CONTROLLER_ERR_BAD_FLAG', err.message, { cause: err });
    throw err;
  }
  const port = Number(v['metrics-port']);
  if (!/^\d+$/.test(v['metrics-port']) || port > 65_535) {
    throw new ControllerError('CONTROLLER_ERR_BAD_FLAG', `--metrics-port must be a port number (0: any free port), got ${v['metrics-port']}`);
  }
  const evictionStrategy = v['eviction-strategy'];
  if (!isEvictionStrategy(evictionStrategy)) {
    throw new ControllerError('CONTROLLER_ERR_BAD_FLAG', `--eviction-strategy: ${JSON.stringify(evictionStrategy)} is not one of ${EVICTION_STRATEGIES.join(', ')}`);
  }
  const nodeHeartbeatTimeoutMs = positiveDuration('node-heartbeat-timeout', v['node-heartbeat-timeout']);
  const migrationUnschedulableTimeoutMs = positiveDuration('migration-unschedulable-timeout', v['migration-unschedulable-timeout']);
  return {
    kubeconfig: v.kubeconfig,
    launcherImage: v['launcher-image'],
    allowEmulation: v['allow-emulation'],
    namespace: v.namespace,
    workers,
    leaderElect: v['leader-elect'],
    leaseNamespace: v['lease-namespace'],
    leaseName: v['lease-name'],
    leaderElection: parseLeaderElectionTimings(v),
    logLevel: v['log-level'],
    httpAddress: v['http-address'],
    metricsPort: port,
    hostDisk: {
      enabled: parseFeatureGates(v['feature-gates']).has(HOST_DISK_GATE),
      allowedDirs: [...new Set(v['host-disk-allowed-dir'].map(checkAllowedDir))],
    },
    evictionStrategy,
    nodeHeartbeatTimeoutMs,
    migrationUnschedulableTimeoutMs,
  };
}

/** A duration flag that must be more than 0. */
function positiveDuration(name: string, value: string): number {
  let ms: number;
  try {
    ms = parseDurationFlag(name, value);
  } catch (err) {
    if (err instanceof GoFlagError) throw new ControllerError('CONTROLLER_ERR_BAD_FLAG', err.message, { cause: err });
    throw err;
  }
  if (ms <= 0) throw new ControllerError('CONTROLLER_ERR_BAD_FLAG', `--${name} must be more than 0, got ${value}`);
  return ms;
}
