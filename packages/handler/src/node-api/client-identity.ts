// Who may use the node API's TLS port. A certificate from the client CA is not enough: any
// certificate that CA signed (the server's own included) would otherwise get in. The caller's
// certificate must carry the clientAuth extended key usage and name one of the configured
// identities in its subject CN or a subjectAltName.

import type { PeerCertificate } from 'node:tls';

/** id-kp-clientAuth (RFC 5280 §4.2.1.12). */
export const CLIENT_AUTH_OID = '1.3.6.1.5.5.7.3.2';

/**
 * Allowed identities, each written as the certificate shows it: `CN=<common name>`, or a
 * subjectAltName entry as OpenSSL prints it (`DNS:<name>`, `URI:<uri>`, `email:<address>`,
 * `IP Address:<ip>`). Matching is exact.
 */
export type AllowedClients = readonly string[];

/** The identities a certificate presents: `CN=…` plus each subjectAltName entry. */
export function certificateIdentities(cert: PeerCertificate): string[] {
  const cn = cert.subject?.CN as string | string[] | undefined;
  const cns = cn === undefined ? [] : Array.isArray(cn) ? cn : [cn];
  const sans = (cert.subjectaltname ?? '').split(/,\s*/).filter((s) => s !== '');
  return [...cns.map((c) => `CN=${c}`), ...sans];
}

/** undefined when the certificate may call, else why not (safe to send back: no secret in it). */
export function clientRefusal(cert: PeerCertificate | undefined, allowed: AllowedClients): string | undefined {
  if (cert === undefined || Object.keys(cert).length === 0) return 'a client certificate is required';
  const usages = cert.ext_key_usage ?? [];
  if (!usages.includes(CLIENT_AUTH_OID)) {
    return 'the client certificate lacks the clientAuth extended key usage (1.3.6.1.5.5.7.3.2)';
  }
  const ids = certificateIdentities(cert);
  if (!ids.some((id) => allowed.includes(id))) {
    const shown = ids.slice(0, 4).map((id) => (id.length > 80 ? `${id.slice(0, 80)}…` : id));
    return `the client certificate (${shown.join(', ') || 'no subject'}) is not among the node API's allowed clients`;
  }
  return undefined;
}
