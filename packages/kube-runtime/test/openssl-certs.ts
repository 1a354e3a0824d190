// Test certificates made with the openssl CLI in a temp dir: a self-signed CA, a server
// certificate for 127.0.0.1, one for a DNS name only, and a client certificate.

import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const EC = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

export interface TestCerts {
  readonly dir: string;
  /** File names inside `dir`. */
  readonly ca: string;
  readonly serverCert: string;
  readonly serverKey: string;
  readonly namedServerCert: string;
  readonly namedServerKey: string;
  readonly clientCert: string;
  readonly clientKey: string;
  readonly otherCa: string;
}

async function signed(dir: string, name: string, subject: string, extensions: string): Promise<void> {
  await run('openssl', ['req', ...EC, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', subject], { cwd: dir });
  await writeFile(join(dir, `${name}.ext`), `${extensions}\n`);
  await run('openssl', ['x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.crt', '-CAkey', 'ca.key', '-set_serial', String(Date.now()), '-days', '2', '-out', `${name}.crt`, '-extfile', `${name}.ext`], { cwd: dir });
}

export async function makeTestCerts(dir: string): Promise<TestCerts> {
  await run('openssl', ['req', '-x509', ...EC, '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '2', '-subj', '/CN=podvirt-test-ca'], { cwd: dir });
  await run('openssl', ['req', '-x509', ...EC, '-keyout', 'other-ca.key', '-out', 'other-ca.crt', '-days', '2', '-subj', '/CN=someone-else'], { cwd: dir });
  await signed(dir, 'server', '/CN=kube-apiserver', 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth');
  await signed(dir, 'named-server', '/CN=kube-apiserver', 'subjectAltName=DNS:apiserver.podvirt.test\nextendedKeyUsage=serverAuth');
  await signed(dir, 'client', '/CN=system:node:node01/O=system:nodes', 'extendedKeyUsage=clientAuth');
  return {
    dir, ca: 'ca.crt', serverCert: 'server.crt', serverKey: 'server.key', namedServerCert: 'named-server.crt', namedServerKey: 'named-server.key',
    clientCert: 'client.crt', clientKey: 'client.key', otherCa: 'other-ca.crt',
  };
}
