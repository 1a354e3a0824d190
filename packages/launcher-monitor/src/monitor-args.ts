import { GoFlagError, parseGoFlags } from '@podvirt/api/go-flags';
import { MonitorError } from './monitor-error.js';

export interface MonitorArgs {
  readonly launcherBin: string;
  /** Everything the monitor does not consume, verbatim and in order. */
  readonly launcherArgs: readonly string[];
  readonly keepAfterFailure: boolean;
  readonly qemuStopTimeoutMs: number;
  readonly reapSweepIntervalMs: number;
}

/** Found on PATH when neither `--launcher-bin` nor PODVIRT_LAUNCHER_BIN says otherwise. */
export const DEFAULT_LAUNCHER_BIN = 'podvirt-launcher';

// KubeVirt's monitor allows 10 s too. The launcher pod's grace period is the VMI's plus
// 30 s and the launcher's the VMI's plus 15 s, so 10 s for the leftover-qemu step still ends
// before kubelet's SIGKILL; qemu itself exits at once on SIGTERM, so only a qemu stuck in the
// kernel ever uses the bound.
export const DEFAULT_QEMU_STOP_TIMEOUT_MS = 10_000;

// A safety net only: SIGCHLD drives reaping, and an idle sweep costs one waitid() call.
export const DEFAULT_REAP_SWEEP_INTERVAL_MS = 5_000;

/**
 * What the launcher's environment adds to the monitor's (and overrides): one glibc malloc arena.
 * glibc gives each thread that allocates an arena of its own, and each keeps the pages it
 * touched; in an idle launcher four threads' arenas held ~4 MiB (1–3 MiB less private memory in
 * one arena). The launcher allocates mostly on V8's heap, which this does not change.
 */
export const LAUNCHER_ENV: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: '1' };

/** The launcher's environment: the monitor's with LAUNCHER_ENV over it. */
export function launcherEnv(env: Readonly<Record<string, string | undefined>>): NodeJS.ProcessEnv {
  return { ...env, ...LAUNCHER_ENV };
}

const OPTIONS = {
  'launcher-bin': { type: 'string' },
  'keep-after-failure': { type: 'boolean' },
  'qemu-stop-timeout': { type: 'duration' },
  'reap-sweep-interval': { type: 'duration' },
} as const;

/**
 * Parses the monitor's command line the way KubeVirt's does: the monitor's own flags are
 * taken out (Go's flag grammar, through the one parser) and every other argument goes to the
 * launcher untouched; after `--` nothing is interpreted.
 */
export function parseMonitorArgs(argv: readonly string[], env: Readonly<Record<string, string | undefined>>): MonitorArgs {
  let parsed;
  try {
    parsed = parseGoFlags(argv, { options: OPTIONS, unknown: 'keep' });
  } catch (err) {
    if (err instanceof GoFlagError) throw usage(err.message, err);
    throw err;
  }
  const { values, rest } = parsed;
  const launcherBin = values['launcher-bin'] ?? env['PODVIRT_LAUNCHER_BIN'] ?? DEFAULT_LAUNCHER_BIN;
  if (launcherBin === '') throw usage('--launcher-bin: the launcher binary must not be empty');
  return {
    launcherBin,
    launcherArgs: rest,
    keepAfterFailure: values['keep-after-failure'] ?? false,
    qemuStopTimeoutMs: values['qemu-stop-timeout'] ?? DEFAULT_QEMU_STOP_TIMEOUT_MS,
    reapSweepIntervalMs: values['reap-sweep-interval'] ?? DEFAULT_REAP_SWEEP_INTERVAL_MS,
  };
}

function usage(message: string, cause?: unknown): MonitorError {
  return new MonitorError('MONITOR_ERR_USAGE', message, cause === undefined ? undefined : { cause });
}

/** Every flag the monitor takes out for itself (the docs check lists them against the READMEs). */
export const MONITOR_OPTIONS = OPTIONS;
