// Kubeconfig and in-cluster parsing as a table, and the order in which a process picks its config.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { stringify } from 'yaml';
import { inClusterConfig, parseKubeconfig, type KubeConfig } from '../src/kube-config.js';
import { loadKubeConfig } from '../src/load-kube-config.js';

const BASE = '/etc/podvirt';

function doc(cluster: object, user: object, extra: object = {}): string {
  return stringify({
    apiVersion: 'v1', kind: 'Config', 'current-context': 'ctx',
    clusters: [{ name: 'other', cluster: { server: 'https://wrong:1' } }, { name: 'k', cluster }],
    users: [{ name: 'u', user }],
    contexts: [{ name: 'ctx', context: { cluster: 'k', user: 'u', namespace: 'ns1' } }, { name: 'second', context: { cluster: 'other', user: 'u' } }],
    ...extra,
  });
}

const pemData = Buffer.from('-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n');

const cases: Array<{ name: string; text: string; context?: string; want: KubeConfig }> = [
  {
    name: 'token user, plain http server, trailing slash dropped',
    text: doc({ server: 'http://127.0.0.1:6443/', 'insecure-skip-tls-verify': true }, { token: 'abc' }),
    want: { server: 'http://127.0.0.1:6443', insecureSkipTlsVerify: true, token: 'abc', namespace: 'ns1' },
  },
  {
    name: 'files relative to the kubeconfig directory, absolute ones kept',
    text: doc(
      { server: 'https://api.example:6443', 'certificate-authority': 'pki/ca.crt', 'tls-server-name': 'kubernetes' },
      { 'client-certificate': '/abs/client.crt', 'client-key': 'client.key', tokenFile: '../tokens/t' },
    ),
    want: {
      server: 'https://api.example:6443', insecureSkipTlsVerify: false, namespace: 'ns1', tlsServerName: 'kubernetes',
      certificateAuthority: { path: '/etc/podvirt/pki/ca.crt' }, clientCertificate: { path: '/abs/client.crt' },
      clientKey: { path: '/etc/podvirt/client.key' }, tokenFile: '/etc/tokens/t',
    },
  },
  {
    name: 'inline *-data wins over files',
    text: doc(
      { server: 'https://api:443', 'certificate-authority': 'ca.crt', 'certificate-authority-data': pemData.toString('base64') },
      { 'client-certificate-data': pemData.toString('base64'), 'client-key-data': pemData.toString('base64'), 'client-key': 'k.pem' },
    ),
    want: {
      server: 'https://api:443', insecureSkipTlsVerify: false, namespace: 'ns1',
      certificateAuthority: { pem: pemData }, clientCertificate: { pem: pemData }, clientKey: { pem: pemData },
    },
  },
  {
    name: 'a JSON kubeconfig',
    text: JSON.stringify({ 'current-context': 'c', clusters: [{ name: 'k', cluster: { server: 'https://json:1' } }], users: [], contexts: [{ name: 'c', context: { cluster: 'k' } }] }),
    want: { server: 'https://json:1', insecureSkipTlsVerify: false },
  },
  {
    name: 'an explicit context overrides current-context',
    text: doc({ server: 'https://k:1' }, {}),
    context: 'second',
    want: { server: 'https://wrong:1', insecureSkipTlsVerify: false },
  },
];

for (const c of cases) {
  test(`parseKubeconfig: ${c.name}`, async () => {
    assert.deepEqual(await parseKubeconfig(c.text, { baseDir: BASE, ...(c.context === undefined ? {} : { context: c.context }) }), c.want);
  });
}

const refusals: Array<{ name: string; text: string; code: string; message: RegExp }> = [
  { name: 'exec plugin without an apiVersion', text: doc({ server: 'https://k:1' }, { exec: { command: 'aws' } }), code: 'KUBE_ERR_CONFIG', message: /user "u" exec plugin speaks apiVersion ""/ },
  { name: 'exec plugin without a command', text: doc({ server: 'https://k:1' }, { exec: { apiVersion: 'client.authentication.k8s.io/v1' } }), code: 'KUBE_ERR_CONFIG', message: /exec plugin has no command/ },
  { name: 'auth-provider', text: doc({ server: 'https://k:1' }, { 'auth-provider': { name: 'gcp' } }), code: 'KUBE_ERR_AUTH_PLUGIN', message: /user "u" authenticates through an auth-provider plugin/ },
  { name: 'basic auth', text: doc({ server: 'https://k:1' }, { username: 'a', password: 'b' }), code: 'KUBE_ERR_CONFIG', message: /basic authentication/ },
  { name: 'no current-context', text: stringify({ clusters: [] }), code: 'KUBE_ERR_CONFIG', message: /no current-context/ },
  { name: 'missing cluster', text: doc({ server: 'https://k:1' }, {}, { contexts: [{ name: 'ctx', context: { cluster: 'gone', user: 'u' } }] }), code: 'KUBE_ERR_CONFIG', message: /no cluster named "gone"/ },
  { name: 'missing user', text: doc({ server: 'https://k:1' }, {}, { users: [] }), code: 'KUBE_ERR_CONFIG', message: /no user named "u"/ },
  { name: 'no server', text: doc({}, {}), code: 'KUBE_ERR_CONFIG', message: /cluster "k" has no server/ },
  { name: 'not a URL', text: doc({ server: 'api:6443' }, {}), code: 'KUBE_ERR_CONFIG', message: /must be http:\/\/ or https:\/\// },
  { name: 'CA and skip-verify', text: doc({ server: 'https://k:1', 'certificate-authority': 'ca', 'insecure-skip-tls-verify': true }, {}), code: 'KUBE_ERR_CONFIG', message: /both a certificate authority and insecure-skip-tls-verify/ },
  { name: 'certificate without key', text: doc({ server: 'https://k:1' }, { 'client-certificate': 'c.crt' }), code: 'KUBE_ERR_CONFIG', message: /needs both a client certificate and a client key/ },
  { name: 'not YAML', text: 'a: [', code: 'KUBE_ERR_CONFIG', message: /not valid YAML/ },
];

for (const r of refusals) {
  test(`parseKubeconfig refuses: ${r.name}`, async () => {
    await assert.rejects(parseKubeconfig(r.text, { baseDir: BASE }), (err: Error & { code?: string }) => {
      assert.equal(err.code, r.code);
      assert.match(err.message, r.message);
      return true;
    });
  });
}

test('inClusterConfig: the service environment, IPv6 in brackets, the service account files', () => {
  assert.deepEqual(inClusterConfig({ KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: '443' }, '/sa'), {
    server: 'https://10.96.0.1:443', insecureSkipTlsVerify: false, certificateAuthority: { path: '/sa/ca.crt' }, tokenFile: '/sa/token',
  });
  assert.equal(inClusterConfig({ KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '6443' }).server, 'https://[fd00::1]:6443');
  assert.throws(() => inClusterConfig({ KUBERNETES_SERVICE_HOST: '10.96.0.1' }), { code: 'KUBE_ERR_CONFIG' });
});

test('loadKubeConfig: --kubeconfig, then in-cluster, then $KUBECONFIG, then ~/.kube/config', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'pvkr-cfg-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const write = async (path: string, server: string): Promise<string> => {
    await mkdir(join(path, '..'), { recursive: true });
    await writeFile(path, doc({ server }, {}));
    return path;
  };
  const explicit = await write(join(dir, 'explicit.yaml'), 'https://explicit:1');
  const fromEnv = await write(join(dir, 'env.yaml'), 'https://env:1');
  await write(join(dir, 'home', '.kube', 'config'), 'https://home:1');
  const inCluster = { KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_SERVICE_PORT: '443' };
  const home = join(dir, 'home');
  const server = async (sources: Parameters<typeof loadKubeConfig>[0]): Promise<string> => (await loadKubeConfig(sources)).server;
  assert.equal(await server({ kubeconfig: explicit, env: { ...inCluster, KUBECONFIG: fromEnv }, homeDir: home }), 'https://explicit:1');
  assert.equal(await server({ env: { ...inCluster, KUBECONFIG: fromEnv }, homeDir: home }), 'https://10.0.0.1:443');
  assert.equal(await server({ env: { KUBECONFIG: `:${fromEnv}:${explicit}` }, homeDir: home }), 'https://env:1');
  assert.equal(await server({ env: {}, homeDir: home }), 'https://home:1');
  await assert.rejects(loadKubeConfig({ env: {}, homeDir: join(dir, 'nobody') }), (err: Error & { code?: string }) => {
    assert.equal(err.code, 'KUBE_ERR_CONFIG');
    assert.match(err.message, /cannot read kubeconfig .*nobody\/\.kube\/config/);
    return true;
  });
  await writeFile(explicit, doc({ server: 'https://k:1' }, { 'auth-provider': { name: 'gcp' } }));
  await assert.rejects(loadKubeConfig({ kubeconfig: explicit, env: {}, homeDir: home }), (err: Error & { code?: string }) => {
    assert.equal(err.code, 'KUBE_ERR_AUTH_PLUGIN');
    assert.ok(err.message.startsWith(`${explicit}: `), 'the message names the file');
    return true;
  });
});
