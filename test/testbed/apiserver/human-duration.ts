/** Ages as kubectl prints them (`5s`, `3m2s`, `4h`, `2d3h`), following apimachinery's HumanDuration. */
export function humanDuration(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  if (seconds < 0) return '0s';
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) return seconds % 60 === 0 ? `${minutes}m` : `${minutes}m${seconds % 60}s`;
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) return minutes % 60 === 0 ? `${hours}h` : `${hours}h${minutes % 60}m`;
  if (hours < 48) return `${hours}h`;
  const days = Math.floor(hours / 24);
  if (days < 8) return hours % 24 === 0 ? `${days}d` : `${days}d${hours % 24}h`;
  if (days < 730) return `${days}d`;
  return `${Math.floor(days / 365)}y${days % 365}d`;
}

/** `<unknown>` is what kubectl shows for a missing timestamp. */
export function ageOf(timestamp: unknown, now: Date): string {
  if (typeof timestamp !== 'string') return '<unknown>';
  return humanDuration(now.getTime() - Date.parse(timestamp));
}
