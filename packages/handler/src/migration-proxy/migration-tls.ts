// The certificates the handlers share for migration traffic between nodes (KubeVirt keeps the
// same three files in a Secret mounted into virt-handler): the CA that signs every handler's
// certificate, this handler's certificate and its key. Checked when loaded, so a broken
// Secret is reported at start naming the file, not at the first migration's handshake.

import { X509Certificate, createPrivateKey } from 'node:crypto';
import { access, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { HandlerError } from '../handler-error.js';

export interface MigrationTls {
  readonly ca: Buffer;
  readonly cert: Buffer;
  readonly key: Buffer;
}

export const MIGRATION_TLS_FILES = { ca: 'ca.crt', cert: 'tls.crt', key: 'tls.key' } as const;

/**
 * Reads `ca.crt`, `tls.crt` and `tls.key` from `dir` and checks that they fit: the key is the
 * certificate's, the CA is a CA and signed the certificate, and the certificate is valid at
 * `now`. Rejects with HANDLER_ERR_MIGRATION_TLS naming the file and the cause.
 */
export async function loadMigrationTls(dir: string, now: Date = new Date()): Promise<MigrationTls> {
  // One after the other: with several missing, the message always names the first of them.
  const ca = await read(dir, MIGRATION_TLS_FILES.ca);
  const cert = await read(dir, MIGRATION_TLS_FILES.cert);
  const key = await read(dir, MIGRATION_TLS_FILES.key);
  const caCert = parse(dir, MIGRATION_TLS_FILES.ca, () => new X509Certificate(ca));
  const own = parse(dir, MIGRATION_TLS_FILES.cert, () => new X509Certificate(cert));
  const privateKey = parse(dir, MIGRATION_TLS_FILES.key, () => createPrivateKey(key));
  if (!caCert.ca) throw invalid(dir, MIGRATION_TLS_FILES.ca, `${caCert.subject.replaceAll('\n', ', ')} is not a CA certificate (basicConstraints CA:TRUE missing)`);
  if (!own.checkPrivateKey(privateKey)) throw invalid(dir, MIGRATION_TLS_FILES.key, `the key is not the one of ${MIGRATION_TLS_FILES.cert}`);
  if (!own.verify(caCert.publicKey)) throw invalid(dir, MIGRATION_TLS_FILES.cert, `it is not signed by ${MIGRATION_TLS_FILES.ca} (${caCert.subject.replaceAll('\n', ', ')})`);
  for (const [file, c] of [[MIGRATION_TLS_FILES.ca, caCert], [MIGRATION_TLS_FILES.cert, own]] as const) {
    if (now < new Date(c.validFrom) || now > new Date(c.validTo)) throw invalid(dir, file, `it is valid from ${c.validFrom} to ${c.validTo} only`);
  }
  return { ca, cert, key };
}

/**
 * As loadMigrationTls, but undefined when none of the three files is there (no directory, or
 * the optional Secret behind it was never created): migration is simply not set up on this
 * node. One or two of them present is a broken set and rejected as such.
 */
export async function loadMigrationTlsIfPresent(dir: string, now?: Date): Promise<MigrationTls | undefined> {
  const present = await Promise.all(Object.values(MIGRATION_TLS_FILES).map((name) => access(join(dir, name)).then(() => true, () => false)));
  if (!present.includes(true)) return undefined;
  return loadMigrationTls(dir, now);
}

async function read(dir: string, name: string): Promise<Buffer> {
  try {
    return await readFile(join(dir, name));
  } catch (err) {
    throw new HandlerError('HANDLER_ERR_MIGRATION_TLS', `cannot read the migration certificate file ${join(dir, name)}: ${(err as Error).message}`, { cause: err });
  }
}

function parse<T>(dir: string, name: string, make: () => T): T {
  try {
    return make();
  } catch (err) {
    throw invalid(dir, name, `not a PEM ${name.endsWith('.key') ? 'private key' : 'certificate'}: ${(err as Error).message}`, err);
  }
}

function invalid(dir: string, name: string, why: string, cause?: unknown): HandlerError {
  return new HandlerError('HANDLER_ERR_MIGRATION_TLS', `migration certificate ${join(dir, name)}: ${why}`, cause === undefined ? undefined : { cause });
}
