// When podvirt-api's certificates are renewed: a pure decision on what the Secret holds, the
// names the serving certificate must cover, and the time. KubeVirt's defaults: the CA lives 7
// days and is renewed 2 days before it ends, the serving certificate lives 24 hours and is
// renewed 12 hours before. A renewed CA is trusted beside the previous one (the bundle holds
// both) until the previous one ends, so that no client holding the old bundle is cut off.

import { namesOf, splitPemBundle, validityOf, type PemPair } from './certificate-authority.js';

export interface RotationPolicy {
  readonly caDurationMs: number;
  readonly caRenewBeforeMs: number;
  readonly certDurationMs: number;
  readonly certRenewBeforeMs: number;
}

const HOUR = 3_600_000;

export const DEFAULT_ROTATION: RotationPolicy = {
  caDurationMs: 168 * HOUR,
  caRenewBeforeMs: 48 * HOUR,
  certDurationMs: 24 * HOUR,
  certRenewBeforeMs: 12 * HOUR,
};

/** What the Secret holds: the CA that signs now, the trusted bundle, the serving pair. */
export interface CertificateSet {
  readonly ca: PemPair;
  /** PEM: the current CA first, then a previous one still valid. */
  readonly caBundle: string;
  readonly serving: PemPair;
}

export type RotationStep =
  | { readonly kind: 'keep'; readonly recheckAt: Date }
  | { readonly kind: 'new-ca'; readonly reason: string; readonly keepInBundle: readonly string[] }
  | { readonly kind: 'new-cert'; readonly reason: string };

/** Policy durations must leave a renewal window inside each lifetime. */
export function checkPolicy(p: RotationPolicy): string | undefined {
  if (p.caRenewBeforeMs >= p.caDurationMs) return 'the CA renewal window must be shorter than its lifetime';
  if (p.certRenewBeforeMs >= p.certDurationMs) return 'the certificate renewal window must be shorter than its lifetime';
  if (p.certDurationMs > p.caDurationMs - p.caRenewBeforeMs) return 'the certificate lifetime must fit in the CA lifetime before its renewal';
  return undefined;
}

export function planRotation(current: CertificateSet | undefined, names: readonly string[], now: Date, p: RotationPolicy): RotationStep {
  const t = now.getTime();
  if (current === undefined) return { kind: 'new-ca', reason: 'no certificates yet', keepInBundle: [] };
  const ca = validityOf(current.ca.cert);
  if (ca === undefined) return { kind: 'new-ca', reason: 'the CA does not parse', keepInBundle: [] };
  const caRenewAt = ca.notAfter.getTime() - p.caRenewBeforeMs;
  if (t >= caRenewAt) {
    const stillValid = splitPemBundle(current.caBundle).filter((c) => (validityOf(c)?.notAfter.getTime() ?? 0) > t).slice(0, 1);
    return { kind: 'new-ca', reason: `the CA ends at ${ca.notAfter.toISOString()}`, keepInBundle: stillValid };
  }
  const cert = validityOf(current.serving.cert);
  if (cert === undefined) return { kind: 'new-cert', reason: 'the serving certificate does not parse' };
  const certRenewAt = cert.notAfter.getTime() - p.certRenewBeforeMs;
  if (t >= certRenewAt) return { kind: 'new-cert', reason: `the serving certificate ends at ${cert.notAfter.toISOString()}` };
  const have = new Set(namesOf(current.serving.cert));
  const missing = names.filter((n) => !have.has(n));
  if (missing.length > 0) return { kind: 'new-cert', reason: `the serving certificate does not cover ${missing.join(', ')}` };
  return { kind: 'keep', recheckAt: new Date(Math.min(caRenewAt, certRenewAt)) };
}
