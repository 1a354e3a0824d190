import { DurationError, parseDuration } from '@podvirt/api/duration';
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
// 15 s, and the launcher spends the VMI's part shutting the guest down, so 10 s for the
// leftover-qemu step still ends before kubelet's SIGKILL; qemu itself exits at once on
// SIGTERM, so only a qemu stuck in the kernel ever uses the bound.
export const DEFAULT_QEMU_STOP_TIMEOUT_MS = 10_000;

// A safety net only: SIGCHLD drives reaping, and an idle sweep costs one waitid() call.
export const DEFAULT_REAP_SWEEP_INTERVAL_MS = 5_000;

const VALUE_FLAGS = new Set(['launcher-bin', 'qemu-stop-timeout', 'reap-sweep-interval']);

/**
 * Parses the monitor's command line the way KubeVirt's does: the monitor's own flags are
 * taken out (one or two leading dashes, `--flag value` or `--flag=value`) and every other
 * argument goes to the launcher untouched; after `--` nothing is interpreted.
 */
export function parseMonitorArgs(argv: readonly string[], env: Readonly<Record<string, string | undefined>>): MonitorArgs {
  const values = new Map<string, string>();
  const launcherArgs: string[] = [];
  let keepAfterFailure = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (arg === '--') {
      launcherArgs.push(...argv.slice(i + 1));
      break;
    }
    const match = /^--?([a-z-]+)(?:=(.*))?$/s.exec(arg);
    const name = match?.[1] ?? '';
    const inline = match?.[2];
    if (name === 'keep-after-failure') {
      keepAfterFailure = parseBool(name, inline ?? 'true');
    } else if (VALUE_FLAGS.has(name)) {
      const value = inline ?? argv[++i];
      if (value === undefined) throw usage(`--${name} needs a value`);
      values.set(name, value);
    } else {
      launcherArgs.push(arg);
    }
  }
  const launcherBin = values.get('launcher-bin') ?? env['PODVIRT_LAUNCHER_BIN'] ?? DEFAULT_LAUNCHER_BIN;
  if (launcherBin === '') throw usage('the launcher binary must not be empty');
  return {
    launcherBin,
    launcherArgs,
    keepAfterFailure,
    qemuStopTimeoutMs: durationFlag('qemu-stop-timeout', values.get('qemu-stop-timeout'), DEFAULT_QEMU_STOP_TIMEOUT_MS),
    reapSweepIntervalMs: durationFlag('reap-sweep-interval', values.get('reap-sweep-interval'), DEFAULT_REAP_SWEEP_INTERVAL_MS),
  };
}

/** A duration flag in the one grammar (`10s`, `500ms`, `1m30s`, a bare number of seconds). */
function durationFlag(name: string, text: string | undefined, fallback: number): number {
  if (text === undefined) return fallback;
  let ms: number;
  try {
    ms = parseDuration(text);
  } catch (err) {
    if (err instanceof DurationError) throw usage(`--${name}: ${err.message}`);
    throw err;
  }
  // Node.js fires a longer timer at once.
  if (ms > 2 ** 31 - 1) throw usage(`--${name}: "${text}" is too long`);
  return ms;
}

function parseBool(name: string, text: string): boolean {
  if (text === 'true' || text === '1') return true;
  if (text === 'false' || text === '0') return false;
  throw usage(`--${name}: "${text}" is not true or false`);
}

function usage(message: string): MonitorError {
  return new MonitorError('PODVIRT_MONITOR_USAGE', message);
}
