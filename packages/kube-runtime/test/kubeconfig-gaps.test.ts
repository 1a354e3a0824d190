// What a cluster operator's kubeconfig may hold beyond a token or a certificate: several files
// in $KUBECONFIG, an exec credential plugin, proxy settings (refused with what to change).
import assert from 'node:assert/strict';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { stringify } from 'yaml';
import { KubeClient } from '../src/kube-client.js';
import { loadKubeConfig } from '../src/load-kube-config.js';
import { bypassed } from '../src/proxy-refusal.js';
import { sendJson, status, TestServer } from './test-server.js';

async function tempDir(t: TestContext): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'pvkr-gaps-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

test('$KUBECONFIG with several files merges as kubectl does: first current-context and first entry of a name win', async (t) => {
  const dir = await tempDir(t);
  await mkdir(join(dir, 'a'));
  await mkdir(join(dir, 'b'));
  const a = join(dir, 'a', 'config');
  const b = join(dir, 'b', 'config');
  // a: only a context and a user; b: the current-context, the cluster, and a user of the same name that must lose.
  await writeFile(a, stringify({
    contexts: [{ name: 'prod', context: { cluster: 'prod-cluster', user: 'ops', namespace: 'vms' } }],
    users: [{ name: 'ops', user: { tokenFile: 'token' } }],
  }));
  await writeFile(b, stringify({
    'current-context': 'prod',
    clusters: [{ name: 'prod-cluster', cluster: { server: 'https://api.prod:6443', 'certificate-authority': 'ca.crt' } }],
    users: [{ name: 'ops', user: { token: 'from-b' } }],
    contexts: [{ name: 'prod', context: { cluster: 'elsewhere', user: 'nobody' } }],
  }));
  const config = await loadKubeConfig({ env: { KUBECONFIG: `${a}:${join(dir, 'missing')}:${b}` }, homeDir: dir });
  assert.deepEqual(config, {
    server: 'https://api.prod:6443',
    certificateAuthority: { path: join(dir, 'b', 'ca.crt') },
    insecureSkipTlsVerify: false,
    tokenFile: join(dir, 'a', 'token'),
    namespace: 'vms',
  });
  await assert.rejects(loadKubeConfig({ env: { KUBECONFIG: `${join(dir, 'x')}:${join(dir, 'y')}` }, homeDir: dir }), { code: 'KUBE_ERR_CONFIG', message: /none of the files exists/ });
});

test('proxy settings are refused where they would apply, with the fix in the message', async (t) => {
  const dir = await tempDir(t);
  const path = join(dir, 'config');
  const write = (cluster: object): Promise<void> => writeFile(path, stringify({
    'current-context': 'c', clusters: [{ name: 'k', cluster }], users: [{ name: 'u', user: { token: 't' } }], contexts: [{ name: 'c', context: { cluster: 'k', user: 'u' } }],
  }));
  await write({ server: 'https://10.96.0.1:443', 'proxy-url': 'http://proxy:3128' });
  await assert.rejects(loadKubeConfig({ kubeconfig: path, env: {}, homeDir: dir }), { code: 'KUBE_ERR_PROXY', message: /proxy-url/ });
  await write({ server: 'https://10.96.0.1:443' });
  await assert.rejects(loadKubeConfig({ kubeconfig: path, env: { HTTPS_PROXY: 'http://proxy:3128' }, homeDir: dir }), {
    code: 'KUBE_ERR_PROXY', message: /HTTPS_PROXY is set and 10\.96\.0\.1 is not in NO_PROXY.*add 10\.96\.0\.1 to NO_PROXY/,
  });
  const ok = await loadKubeConfig({ kubeconfig: path, env: { HTTPS_PROXY: 'http://proxy:3128', NO_PROXY: 'localhost,10.96.0.0/12' }, homeDir: dir });
  assert.equal(ok.server, 'https://10.96.0.1:443');
  assert.equal((await loadKubeConfig({ kubeconfig: path, env: { HTTP_PROXY: 'http://proxy:3128' }, homeDir: dir })).server, 'https://10.96.0.1:443', 'HTTP_PROXY does not apply to https');
});

test('NO_PROXY matching: *, hosts, ports, domain suffixes, IPv4 and IPv6 CIDRs', () => {
  const cases: Array<[string, string, string, boolean]> = [
    ['api.example.com', '443', '*', true],
    ['api.example.com', '443', 'api.example.com', true],
    ['api.example.com', '443', '.example.com', true],
    ['api.example.com', '443', 'example.com', true],
    ['api.example.com', '443', 'ample.com', false],
    ['api.example.com', '443', 'api.example.com:6443', false],
    ['api.example.com', '6443', 'api.example.com:6443', true],
    ['10.96.0.1', '443', '10.96.0.0/12', true],
    ['10.112.0.1', '443', '10.96.0.0/12', false],
    ['fd00::1', '443', 'fd00::/8', true],
    ['fe80::1', '443', 'fd00::/8', false],
    ['10.96.0.1', '443', ' , 10.96.0.1', true],
  ];
  for (const [host, port, noProxy, want] of cases) assert.equal(bypassed(host, port, noProxy), want, `${host}:${port} vs ${noProxy}`);
});

async function plugin(dir: string, body: string): Promise<string> {
  const path = join(dir, 'plugin.sh');
  await writeFile(path, `#!/bin/sh\n${body}\n`);
  await chmod(path, 0o755);
  return path;
}

async function execKubeconfig(dir: string, server: string, exec: object): Promise<string> {
  const path = join(dir, 'config');
  await writeFile(path, stringify({
    'current-context': 'c', clusters: [{ name: 'k', cluster: { server } }], contexts: [{ name: 'c', context: { cluster: 'k', user: 'u' } }],
    users: [{ name: 'u', user: { exec: { apiVersion: 'client.authentication.k8s.io/v1', ...exec } } }],
  }));
  return path;
}

test('an exec credential plugin supplies the token; it runs again after a 401, and gets its env and KUBERNETES_EXEC_INFO', async (t) => {
  const dir = await tempDir(t);
  const server = await TestServer.start();
  t.after(() => server.close());
  const runs = join(dir, 'runs');
  // Each run prints a new token: token-1, token-2 …; it records the environment it was given.
  const command = await plugin(dir, `
n=$(( $(cat "${runs}" 2>/dev/null || echo 0) + 1 )); echo $n > "${runs}"
echo "$KUBERNETES_EXEC_INFO" > "${join(dir, 'info')}"; echo "$CLOUD_PROFILE" > "${join(dir, 'profile')}"
printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"token-%s"}}' $n`);
  const path = await execKubeconfig(dir, server.url, { command, args: [], env: [{ name: 'CLOUD_PROFILE', value: 'prod' }], provideClusterInfo: true });
  const config = await loadKubeConfig({ kubeconfig: path, env: { PATH: '/usr/bin:/bin' }, homeDir: dir });
  const client = await KubeClient.create(config);
  t.after(() => client.close());
  server.handle((req, res) => (req.headers['authorization'] === 'Bearer token-1' && req.url.pathname === '/revoked'
    ? sendJson(res, 401, status(401, 'Unauthorized', 'Unauthorized'))
    : sendJson(res, 200, {})));
  await client.request({ path: '/a' });
  await client.request({ path: '/b' });
  await assert.rejects(client.request({ path: '/revoked' }), { code: 'KUBE_ERR_UNAUTHORIZED' });
  await client.request({ path: '/c' });
  assert.deepEqual(server.requests.map((r) => r.headers['authorization']), ['Bearer token-1', 'Bearer token-1', 'Bearer token-1', 'Bearer token-2']);
  const { readFile } = await import('node:fs/promises');
  assert.equal((await readFile(join(dir, 'profile'), 'utf8')).trim(), 'prod');
  assert.deepEqual(JSON.parse(await readFile(join(dir, 'info'), 'utf8')), {
    apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', spec: { interactive: false, cluster: { server: server.url } },
  });
});

test('exec plugin failures and refusals are specific', async (t) => {
  const dir = await tempDir(t);
  const request = async (exec: object): Promise<unknown> => {
    const config = await loadKubeConfig({ kubeconfig: await execKubeconfig(dir, 'http://127.0.0.1:1', exec), env: {}, homeDir: dir });
    const client = await KubeClient.create(config);
    try {
      return await client.request({ path: '/a' });
    } finally {
      await client.close();
    }
  };
  await assert.rejects(request({ command: join(dir, 'no-such-plugin'), installHint: 'install it from your cloud' }), {
    code: 'KUBE_ERR_EXEC_PLUGIN', message: /no-such-plugin: not found: install it from your cloud/,
  });
  await assert.rejects(request({ command: await plugin(dir, 'echo denied >&2; exit 3') }), { code: 'KUBE_ERR_EXEC_PLUGIN', message: /denied/ });
  await assert.rejects(request({ command: await plugin(dir, `echo '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"clientCertificateData":"x","clientKeyData":"y"}}'`) }), {
    code: 'KUBE_ERR_EXEC_PLUGIN', message: /client certificate/,
  });
  await assert.rejects(request({ command: 'x', interactiveMode: 'Always' }), { code: 'KUBE_ERR_AUTH_PLUGIN', message: /no terminal/ });
  await assert.rejects(request({ command: 'x', apiVersion: 'client.authentication.k8s.io/v1alpha1' }), { code: 'KUBE_ERR_CONFIG', message: /v1alpha1/ });
});
