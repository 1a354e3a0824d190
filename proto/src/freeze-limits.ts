// The longest automatic thaw either side accepts. Node's timers hold at most 2^31-1 ms; a
// longer delay fires at once (with a TimeoutOverflowWarning), which would thaw the guest the
// moment it was frozen. Both the node API and the Cmd service refuse anything longer.
export const MAX_UNFREEZE_TIMEOUT_SECONDS = Math.floor((2 ** 31 - 1) / 1000);

/** undefined when `value` is a valid unfreeze timeout, else why not. */
export function unfreezeTimeoutProblem(value: unknown): string | undefined {
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= MAX_UNFREEZE_TIMEOUT_SECONDS) return undefined;
  const shown = typeof value === 'number' ? String(value) : typeof value;
  return `unfreeze_timeout_seconds must be a whole number from 0 (stay frozen until Unfreeze) to ${MAX_UNFREEZE_TIMEOUT_SECONDS} (about 24 days), got ${shown}`;
}
