// A CA and one certificate per node for the handlers' migration proxy, made with Debian's
// openssl as an operator would (commands in the handler README): EC P-256 keys, the CA marked
// CA:TRUE, each node's certificate for both TLS roles (a handler is server and client).

import { execFile } from 'node:child_process';
import { mkdir, writeFile, copyFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const EC_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

export interface MigrationCertificateOptions {
  /** Subject CN of the CA; another name makes an unrelated CA. */
  readonly caName?: string;
  readonly days?: number;
}

/**
 * Writes `<dir>/ca.crt` and `<dir>/ca.key`, and for each node `<dir>/<node>/{ca.crt,tls.crt,tls.key}`
 * (the layout `--migration-tls-dir` reads). Returns each node's directory.
 */
export async function makeMigrationCertificates(dir: string, nodes: readonly string[], o: MigrationCertificateOptions = {}): Promise<Map<string, string>> {
  const days = String(o.days ?? 30);
  const ssl = (...args: string[]): Promise<unknown> => run('openssl', args, { cwd: dir });
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await ssl('req', '-x509', ...EC_KEY, '-keyout', 'ca.key', '-out', 'ca.crt', '-days', days, '-subj', `/CN=${o.caName ?? 'podvirt migration CA'}`,
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign');
  const dirs = new Map<string, string>();
  for (const node of nodes) {
    const nodeDir = join(dir, node);
    await mkdir(nodeDir, { recursive: true, mode: 0o700 });
    await writeFile(join(nodeDir, 'tls.ext'), `basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth,clientAuth\nsubjectAltName=DNS:${node}\n`);
    await ssl('req', ...EC_KEY, '-keyout', join(node, 'tls.key'), '-out', join(node, 'tls.csr'), '-subj', `/CN=${node}`);
    await ssl('x509', '-req', '-in', join(node, 'tls.csr'), '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-days', days,
      '-extfile', join(node, 'tls.ext'), '-out', join(node, 'tls.crt'));
    await copyFile(join(dir, 'ca.crt'), join(nodeDir, 'ca.crt'));
    dirs.set(node, nodeDir);
  }
  return dirs;
}
