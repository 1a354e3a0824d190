// Kubernetes' own timestamp (metav1.Time): RFC 3339 in UTC at whole seconds, "2026-01-02T03:04:05Z".
// Every timestamp podvirt writes into an object (conditions, phase transitions, migration times,
// Events, annotations) is spelled by this one function, so that a value read back from the API
// server compares equal to the one written. A Lease's renewTime is a MicroTime instead.

/** The instant `at` (a Date or epoch milliseconds), with the fraction of a second dropped. */
export function kubeTime(at: Date | number): string {
  return new Date(at).toISOString().replace(/\.\d+Z$/, 'Z');
}
