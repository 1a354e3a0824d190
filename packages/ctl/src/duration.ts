// Durations as virtctl and kubectl take them (Go's time.ParseDuration: "90s", "5m", "1h30m",
// "250ms"), plus a bare number meaning seconds, which shell scripts tend to pass.

const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
// A source string, not a RegExp: a sticky RegExp carries lastIndex between calls.
const PART = String.raw`(\d+(?:\.\d+)?)(ms|h|m|s)`;

// Milliseconds, or undefined when the text is not a duration.
export function parseDuration(text: string): number | undefined {
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  if (text === '') return undefined;
  let total = 0;
  const re = new RegExp(PART, 'y');
  while (re.lastIndex < text.length) {
    const match = re.exec(text);
    if (match === null) return undefined;
    const [, amount, unit] = match;
    total += Number(amount) * (UNIT_MS[unit ?? ''] ?? Number.NaN);
  }
  return Number.isFinite(total) ? Math.round(total) : undefined;
}

// The shortest Go-style spelling: 300000 → "5m", 90000 → "1m30s", 250 → "250ms".
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${ms}ms`;
  const hours = Math.floor(ms / 3_600_000);
  const minutes = Math.floor((ms % 3_600_000) / 60_000);
  const seconds = (ms % 60_000) / 1000;
  const parts = [hours > 0 ? `${hours}h` : '', minutes > 0 ? `${minutes}m` : '', seconds > 0 ? `${seconds}s` : ''];
  return parts.join('');
}
