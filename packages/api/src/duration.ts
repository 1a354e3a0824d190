// The one duration grammar of every podvirt command line: Go's time.ParseDuration, as KubeVirt
// and kubectl take durations ("1h30m10s", "1.5h", "300ms", "0s"), plus a bare number meaning
// seconds, which shell scripts tend to pass. Imports nothing, so the launcher's PID-1 monitor
// loads this file alone (`@podvirt/api/duration`), not the VMI API.

export class DurationError extends Error {
  readonly code = 'API_ERR_DURATION';
  override readonly name = 'DurationError';
}

/** The longest wait a Node.js timer takes (setTimeout fires a longer one at once); every duration flag ends up in a timer. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

const UNIT_MS: Readonly<Record<string, number>> = { ns: 1e-6, us: 1e-3, 'µs': 1e-3, 'μs': 1e-3, ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };
// One `<number><unit>` part; a source string, because a sticky RegExp keeps lastIndex between calls.
const PART = String.raw`(\d+\.?\d*|\.\d+)(ns|us|µs|μs|ms|s|m|h)`;

/** Whole milliseconds (rounded) of `text`; throws DurationError saying what is wrong. */
export function parseDuration(text: string): number {
  const spelled = JSON.stringify(text);
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1_000);
  if (text.startsWith('-')) throw new DurationError(`${spelled} is negative; a duration here is 0 or more`);
  const body = text.startsWith('+') ? text.slice(1) : text;
  if (body === '') throw new DurationError(`${spelled} is not a duration such as 90s, 1h30m or 300ms`);
  const re = new RegExp(PART, 'y');
  let total = 0;
  while (re.lastIndex < body.length) {
    const match = re.exec(body);
    if (match === null) throw new DurationError(`${spelled} is not a duration such as 90s, 1h30m or 300ms (units: h, m, s, ms, us, ns)`);
    total += Number(match[1]) * (UNIT_MS[match[2] ?? ''] ?? Number.NaN);
  }
  if (!Number.isFinite(total)) throw new DurationError(`${spelled} is too long`);
  return Math.round(total);
}

/** The shortest Go-style spelling: 300000 → "5m", 90000 → "1m30s", 250 → "250ms", 0 → "0s". */
export function formatDuration(ms: number): string {
  if (ms === 0) return '0s';
  if (ms < 1000) return `${ms}ms`;
  const hours = Math.floor(ms / 3_600_000);
  const minutes = Math.floor((ms % 3_600_000) / 60_000);
  const seconds = (ms % 60_000) / 1000;
  return [hours > 0 ? `${hours}h` : '', minutes > 0 ? `${minutes}m` : '', seconds > 0 ? `${seconds}s` : ''].join('');
}
