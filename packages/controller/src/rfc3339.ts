/** RFC 3339 at second precision, the form Kubernetes writes its own timestamps in. */
export function rfc3339(time: Date): string {
  return time.toISOString().replace(/\.\d+Z$/, 'Z');
}
