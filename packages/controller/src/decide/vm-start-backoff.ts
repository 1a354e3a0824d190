// Crash-loop back-off of a VirtualMachine, with KubeVirt's numbers: a VMI that ends (Failed or
// Succeeded) without ever having run counts as a start failure; the n-th consecutive one delays
// the next start by 10 s × n² plus up to half of that at random (so VMs failing together spread
// out), capped at 300 s. A VMI that reached Running resets the count, and so does a strategy that
// does not restart by itself (Manual, Halted).

import { isFinalPhase, kubeTime, type RunStrategy, type VirtualMachineInstance, type VmStartFailure } from '@podvirt/api';

/** KubeVirt's cap (defaultMaxCrashLoopBackoffDelaySeconds). */
export const MAX_START_BACKOFF_SECONDS = 300;
/** The step below which the interval never goes; KubeVirt's interval is cap / 30, at least 10 s. */
const MIN_INTERVAL_SECONDS = 10;

/** Seconds to wait before the next start after `failCount` consecutive start failures. */
export function startBackoffSeconds(failCount: number, random: () => number, maxSeconds = MAX_START_BACKOFF_SECONDS): number {
  const n = Math.max(1, failCount);
  const base = Math.max(MIN_INTERVAL_SECONDS, Math.floor(maxSeconds / 30)) * n * n;
  const jitter = Math.floor(random() * (Math.floor(base / 2) + 1));
  return Math.min(maxSeconds, base + jitter);
}

/** Whether the VMI ever reached Running (its phase history says so). */
export function everRan(vmi: VirtualMachineInstance | undefined): boolean {
  return vmi?.status?.phaseTransitionTimestamps?.some((t) => t.phase === 'Running') === true || vmi?.status?.phase === 'Running';
}

const RESTARTING: ReadonlySet<RunStrategy> = new Set(['Always', 'RerunOnFailure', 'Once']);

/** The VM's `status.startFailure` after seeing `vmi`; undefined clears it. */
export function nextStartFailure(
  previous: VmStartFailure | undefined,
  vmi: VirtualMachineInstance | undefined,
  strategy: RunStrategy,
  nowMs: number,
  random: () => number,
): VmStartFailure | undefined {
  if (everRan(vmi) || !RESTARTING.has(strategy)) return undefined;
  if (vmi === undefined || !isFinalPhase(vmi.status?.phase)) return previous;
  if (previous?.lastFailedVMIUID !== undefined && previous.lastFailedVMIUID === vmi.metadata.uid) return previous;
  const count = (previous?.consecutiveFailCount ?? 0) + 1;
  return {
    consecutiveFailCount: count,
    ...(vmi.metadata.uid === undefined ? {} : { lastFailedVMIUID: vmi.metadata.uid }),
    retryAfterTimestamp: kubeTime(nowMs + startBackoffSeconds(count, random) * 1000),
  };
}

/** Milliseconds until the next start may happen; 0 when it may happen now. */
export function startBackoffLeftMs(failure: VmStartFailure | undefined, nowMs: number): number {
  if (failure?.retryAfterTimestamp === undefined) return 0;
  return Math.max(0, Date.parse(failure.retryAfterTimestamp) - nowMs);
}
