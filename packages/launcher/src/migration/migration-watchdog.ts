// When a running migration must be aborted, decided from its job statistics alone (pure, so a
// table test covers it without a clock): no progress — the data left to send has not dropped
// below its lowest value for the progress timeout, as when the guest dirties memory faster than
// the bandwidth limit lets it go — or no completion within the time allowed per GiB moved.
// KubeVirt's migration monitor applies the same two limits (progressTimeout, completionTimeoutPerGiB).

export interface WatchdogLimits {
  /** 0: never. */
  readonly progressTimeoutMs: number;
  /** 0: never. Already multiplied by the GiB the migration moves. */
  readonly completionTimeoutMs: number;
}

export interface WatchdogState {
  readonly startedAtMs: number;
  /** The lowest data_remaining seen so far, and when it was first seen. */
  readonly lowestRemaining: number | undefined;
  readonly lowestAtMs: number;
}

export type WatchdogVerdict =
  | { readonly kind: 'continue'; readonly state: WatchdogState }
  | { readonly kind: 'abort'; readonly reason: string };

export function startWatchdog(nowMs: number): WatchdogState {
  return { startedAtMs: nowMs, lowestRemaining: undefined, lowestAtMs: nowMs };
}

export function judgeProgress(limits: WatchdogLimits, state: WatchdogState, dataRemaining: number | undefined, nowMs: number): WatchdogVerdict {
  if (limits.completionTimeoutMs > 0 && nowMs - state.startedAtMs >= limits.completionTimeoutMs) {
    return { kind: 'abort', reason: `the migration did not complete within ${Math.round(limits.completionTimeoutMs / 1000)} s (completion timeout)` };
  }
  let next = state;
  if (dataRemaining !== undefined && (state.lowestRemaining === undefined || dataRemaining < state.lowestRemaining)) {
    next = { ...state, lowestRemaining: dataRemaining, lowestAtMs: nowMs };
  }
  if (limits.progressTimeoutMs > 0 && nowMs - next.lowestAtMs >= limits.progressTimeoutMs) {
    return { kind: 'abort', reason: `the migration made no progress for ${Math.round(limits.progressTimeoutMs / 1000)} s (progress timeout): the guest dirties memory faster than it can be sent` };
  }
  return { kind: 'continue', state: next };
}
