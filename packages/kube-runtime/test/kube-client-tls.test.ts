// KubeClient over HTTPS against a real TLS server with openssl-made certificates, configured
// the way a process gets it: from a kubeconfig file (relative paths and inline data) whose
// client certificate the server requires.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import type { TLSSocket } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, after, test } from 'node:test';
import { stringify } from 'yaml';
import { KubeClient } from '../src/kube-client.js';
import { readKubeconfigFile } from '../src/load-kube-config.js';
import { makeTestCerts, type TestCerts } from './openssl-certs.js';
import { sendJson, TestServer } from './test-server.js';

let certs: TestCerts;
let server: TestServer;
let namedServer: TestServer;
// Closed in reverse order of creation once every test has run.
const cleanups: Array<() => Promise<void>> = [];
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

before(async () => {
  const dir = await mkdtemp(join(tmpdir(), 'pvkr-tls-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  certs = await makeTestCerts(dir);
  const file = (name: string): Promise<Buffer> => readFile(join(dir, name));
  const tls = async (cert: string, key: string) => ({ cert: await file(cert), key: await file(key), ca: await file(certs.ca), requestCert: true, rejectUnauthorized: true });
  server = await TestServer.start(await tls(certs.serverCert, certs.serverKey));
  cleanups.push(() => server.close());
  namedServer = await TestServer.start(await tls(certs.namedServerCert, certs.namedServerKey));
  cleanups.push(() => namedServer.close());
  for (const s of [server, namedServer]) {
    s.handle((_req, res) => sendJson(res, 200, { user: (res.socket as TLSSocket).getPeerCertificate().subject.CN }));
  }
});

/** Writes a kubeconfig into a subdirectory of the cert dir, so its file references are relative (`../ca.crt`). */
async function kubeconfig(name: string, cluster: object, user: object): Promise<string> {
  const dir = join(certs.dir, 'kube');
  await mkdir(dir, { recursive: true });
  const path = join(dir, `${name}.yaml`);
  await writeFile(path, stringify({
    apiVersion: 'v1', kind: 'Config', 'current-context': 'c',
    clusters: [{ name: 'k', cluster }], users: [{ name: 'u', user }], contexts: [{ name: 'c', context: { cluster: 'k', user: 'u' } }],
  }));
  return path;
}

async function clientFor(path: string): Promise<KubeClient> {
  return KubeClient.create(await readKubeconfigFile(path), { timeoutMs: 5_000 });
}

const whoami = async (client: KubeClient): Promise<unknown> => client.request({ path: '/apis/authentication.k8s.io/v1/selfsubjectreviews' });

test('client certificate auth with CA, certificate and key files relative to the kubeconfig', async (t) => {
  const path = await kubeconfig('files', { server: server.url, 'certificate-authority': `../${certs.ca}` }, {
    'client-certificate': `../${certs.clientCert}`, 'client-key': `../${certs.clientKey}`,
  });
  const client = await clientFor(path);
  t.after(() => client.close());
  assert.deepEqual(await whoami(client), { user: 'system:node:node01' });
});

test('client certificate auth with inline *-data', async (t) => {
  const b64 = async (name: string): Promise<string> => (await readFile(join(certs.dir, name))).toString('base64');
  const path = await kubeconfig('inline', { server: server.url, 'certificate-authority-data': await b64(certs.ca) }, {
    'client-certificate-data': await b64(certs.clientCert), 'client-key-data': await b64(certs.clientKey),
  });
  const client = await clientFor(path);
  t.after(() => client.close());
  assert.deepEqual(await whoami(client), { user: 'system:node:node01' });
});

test('an untrusted server certificate, or no client certificate, fails the connection; skip-verify trusts any server', async (t) => {
  const user = { 'client-certificate': `../${certs.clientCert}`, 'client-key': `../${certs.clientKey}` };
  const untrusted = await clientFor(await kubeconfig('other-ca', { server: server.url, 'certificate-authority': `../${certs.otherCa}` }, user));
  t.after(() => untrusted.close());
  await assert.rejects(whoami(untrusted), { code: 'KUBE_ERR_CONNECTION' });

  const anonymous = await clientFor(await kubeconfig('anonymous', { server: server.url, 'certificate-authority': `../${certs.ca}` }, {}));
  t.after(() => anonymous.close());
  await assert.rejects(whoami(anonymous), { code: 'KUBE_ERR_CONNECTION' });

  const insecure = await clientFor(await kubeconfig('insecure', { server: server.url, 'insecure-skip-tls-verify': true }, user));
  t.after(() => insecure.close());
  assert.deepEqual(await whoami(insecure), { user: 'system:node:node01' });
});

test('tls-server-name verifies a certificate issued for a DNS name when dialling an IP', async (t) => {
  const user = { 'client-certificate': `../${certs.clientCert}`, 'client-key': `../${certs.clientKey}` };
  const cluster = { server: namedServer.url, 'certificate-authority': `../${certs.ca}` };
  const plain = await clientFor(await kubeconfig('by-ip', cluster, user));
  t.after(() => plain.close());
  await assert.rejects(whoami(plain), { code: 'KUBE_ERR_CONNECTION' });
  const named = await clientFor(await kubeconfig('by-name', { ...cluster, 'tls-server-name': 'apiserver.podvirt.test' }, user));
  t.after(() => named.close());
  assert.deepEqual(await whoami(named), { user: 'system:node:node01' });
});
