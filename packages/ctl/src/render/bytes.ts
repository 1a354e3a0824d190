const UNITS = ['Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'];

// Binary units as Kubernetes quantities spell them: 512 → "512B", 1536 → "1.5Ki",
// 10737418240 → "10Gi"; three significant digits at most.
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes}B`;
  let value = bytes;
  let unit = '';
  for (const next of UNITS) {
    if (value < 1024) break;
    value /= 1024;
    unit = next;
  }
  const text = value >= 100 ? Math.round(value).toString() : value.toFixed(1).replace(/\.0$/, '');
  return `${text}${unit}`;
}
