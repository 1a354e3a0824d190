// The serving certificates of podvirt-api, made by the process itself (as KubeVirt's operator
// makes virt-api's): a self-signed CA that only signs podvirt-api's serving certificate, and that
// certificate for the Service's DNS names. EC P-256 keys through WebCrypto; PEM in and out, as a
// kubernetes.io/tls Secret and a webhook's caBundle hold them.

import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';
import { PodvirtApiError } from '../api-error.js';

// @peculiar/x509 asks for a provider once; Node's own WebCrypto is the only one here.
x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

type CryptoKey = webcrypto.CryptoKey;
type CryptoKeyPair = webcrypto.CryptoKeyPair;

const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;

/** A certificate and its private key, both PEM. */
export interface PemPair {
  readonly cert: string;
  readonly key: string;
}

export interface Validity {
  readonly notBefore: Date;
  readonly notAfter: Date;
}

/** Back-dated a little: a client whose clock runs behind must not see a certificate from the future. */
export const BACKDATE_MS = 5 * 60_000;

function serial(): string {
  // A positive 16-byte serial (RFC 5280 allows up to 20 octets).
  const bytes = webcrypto.getRandomValues(new Uint8Array(16));
  bytes[0] = (bytes[0] ?? 0) & 0x7f;
  return Buffer.from(bytes).toString('hex');
}

async function keyPair(): Promise<CryptoKeyPair> {
  return webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify']) as Promise<CryptoKeyPair>;
}

/** PEM ending in a newline, so that certificates concatenate into a valid bundle. */
function line(pem: string): string {
  return pem.endsWith('\n') ? pem : `${pem}\n`;
}

async function keyPem(key: CryptoKey): Promise<string> {
  const der = await webcrypto.subtle.exportKey('pkcs8', key);
  return line(x509.PemConverter.encode(der, 'PRIVATE KEY'));
}

async function importKey(pem: string): Promise<CryptoKey> {
  try {
    return await webcrypto.subtle.importKey('pkcs8', x509.PemConverter.decodeFirst(pem), ALG, true, ['sign']);
  } catch (err) {
    throw new PodvirtApiError('PODVIRT_API_ERR_CERTIFICATE', 'the CA key is not a PKCS#8 P-256 key', { cause: err });
  }
}

/** A new self-signed CA valid `durationMs` from `now`. */
export async function makeCa(commonName: string, now: Date, durationMs: number): Promise<PemPair> {
  const keys = await keyPair();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: `CN=${commonName}`,
    notBefore: new Date(now.getTime() - BACKDATE_MS),
    notAfter: new Date(now.getTime() + durationMs),
    signingAlgorithm: ALG,
    keys,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { cert: line(cert.toString('pem')), key: await keyPem(keys.privateKey) };
}

/** A serving certificate for `names` (DNS names, or IP addresses), signed by `ca`. */
export function issueServingCert(ca: PemPair, names: readonly string[], now: Date, durationMs: number): Promise<PemPair> {
  const sans = names.map((n) => (/^[\d.]+$|:/.test(n) ? { type: 'ip' as const, value: n } : { type: 'dns' as const, value: n }));
  return issue(ca, `CN=${names[0] ?? 'podvirt-api'}`, [
    new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth], false),
    new x509.SubjectAlternativeNameExtension(sans, false),
  ], now, durationMs);
}

/** A client certificate (clientAuth only) for `commonName`, signed by `ca`: a front proxy's or a node API client's. */
export function issueClientCert(ca: PemPair, commonName: string, now: Date, durationMs: number): Promise<PemPair> {
  return issue(ca, `CN=${commonName}`, [new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.clientAuth], false)], now, durationMs);
}

async function issue(ca: PemPair, subject: string, usage: readonly x509.Extension[], now: Date, durationMs: number): Promise<PemPair> {
  const caCert = new x509.X509Certificate(ca.cert);
  const keys = await keyPair();
  const notAfter = new Date(Math.min(now.getTime() + durationMs, caCert.notAfter.getTime()));
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject,
    issuer: caCert.subject,
    notBefore: new Date(now.getTime() - BACKDATE_MS),
    notAfter,
    signingAlgorithm: ALG,
    publicKey: keys.publicKey,
    signingKey: await importKey(ca.key),
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      ...usage,
      await x509.AuthorityKeyIdentifierExtension.create(caCert, false),
    ],
  });
  return { cert: line(cert.toString('pem')), key: await keyPem(keys.privateKey) };
}

/** The validity of the first certificate in `pem`; undefined when it does not parse. */
export function validityOf(pem: string): Validity | undefined {
  try {
    const cert = new x509.X509Certificate(pem);
    return { notBefore: cert.notBefore, notAfter: cert.notAfter };
  } catch {
    return undefined;
  }
}

/** The DNS and IP names a serving certificate covers. */
export function namesOf(pem: string): string[] {
  try {
    const san = new x509.X509Certificate(pem).getExtension(x509.SubjectAlternativeNameExtension);
    return (san?.names.items ?? []).map((n) => n.value);
  } catch {
    return [];
  }
}

/** Every certificate of a PEM bundle, in order. */
export function splitPemBundle(bundle: string): string[] {
  return bundle.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----\n?/g)?.map((c) => (c.endsWith('\n') ? c : `${c}\n`)) ?? [];
}
