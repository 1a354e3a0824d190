// The in-repo API server's aggregation layer against a backend of the test's own (an HTTPS server
// that demands a client certificate of the front-proxy CA, as podvirt-api does): an APIService's
// paths proxied with the caller's identity in X-Remote-User/-Group and nothing the caller claimed,
// RBAC checked before the backend is called, websocket upgrades spliced through and refusals passed
// back, 503 for an APIService without endpoint or whose backend fails TLS, discovery, and the
// SubjectAccessReview an aggregated server asks.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { request, type IncomingHttpHeaders } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { after, before, describe, test } from 'node:test';
import { eventually, openTestWebSocket } from '@podvirt/test-support';
import { FRONT_PROXY_CLIENT, issueCertificate, makeCa, makeFrontProxyPki } from '../testbed/control-plane/cluster-pki.js';
import { startTestApiServer, type TestApiServer } from './testbed-helpers.js';

const GROUP = 'widgets.example.io';
const NS = 'team-a';

interface Seen {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly clientCn: string;
}

describe('the in-repo API server aggregates an API', () => {
  let api: TestApiServer;
  let backend: Server;
  let caPem: string;
  const seen: Seen[] = [];

  before(async () => {
    api = await startTestApiServer({ namespaces: ['default', 'kube-system', NS, 'team-b'] });
    const [frontProxy, ca] = await Promise.all([makeFrontProxyPki(api.dir), makeCa(api.dir, 'backend-ca', '/CN=backend-ca')]);
    const serving = await issueCertificate(ca, 'backend', '/CN=backend', 'serverAuth', `DNS:widgets.${NS}.svc`);
    const [requestHeaderCa, proxyCert, proxyKey, backendCa, cert, key] = await Promise.all(
      [frontProxy.ca.caCert, frontProxy.client.cert, frontProxy.client.key, ca.caCert, serving.cert, serving.key].map((f) => readFile(f, 'utf8')),
    );
    caPem = backendCa ?? '';
    api.server.enableAggregation({ requestHeaderCa: requestHeaderCa ?? '', proxyClient: { cert: proxyCert ?? '', key: proxyKey ?? '' }, allowedNames: [FRONT_PROXY_CLIENT] });
    backend = createServer({ cert, key, ca: requestHeaderCa, requestCert: true, rejectUnauthorized: true }, (req, res) => {
      const clientCn = String((req.socket as TLSSocket).getPeerCertificate().subject?.CN ?? '');
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, clientCn });
      const body = JSON.stringify({ kind: 'APIResourceList', groupVersion: `${GROUP}/v1`, resources: [] });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    });
    backend.on('upgrade', (req, socket) => {
      if (req.url?.includes('/refused') === true) {
        socket.end('HTTP/1.1 409 Conflict\r\ncontent-type: text/plain\r\ncontent-length: 8\r\n\r\nnot here');
        return;
      }
      socket.write('HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\nconnection: Upgrade\r\nsec-websocket-protocol: plain.kubevirt.io\r\n\r\n');
      // An unmasked binary frame saying who called, then the socket echoes nothing more.
      const who = Buffer.from(String(req.headers['x-remote-user']));
      socket.write(Buffer.concat([Buffer.from([0x82, who.length]), who]));
    });
    await new Promise<void>((resolve) => backend.listen(0, '127.0.0.1', resolve));
    const port = (backend.address() as AddressInfo).port;
    await apply([
      { apiVersion: 'v1', kind: 'Service', metadata: { name: 'widgets', namespace: NS }, spec: { ports: [{ name: 'https', port: 443, targetPort: port }] } },
      { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'widgets', namespace: NS }, subsets: [{ addresses: [{ ip: '127.0.0.1' }], ports: [{ name: 'https', port }] }] },
      {
        apiVersion: 'apiregistration.k8s.io/v1', kind: 'APIService', metadata: { name: `v1.${GROUP}` },
        spec: { group: GROUP, version: 'v1', groupPriorityMinimum: 1000, versionPriority: 15, service: { namespace: NS, name: 'widgets', port: 443 }, caBundle: Buffer.from(caPem).toString('base64') },
      },
      {
        apiVersion: 'apiregistration.k8s.io/v1', kind: 'APIService', metadata: { name: 'v1.gone.example.io' },
        spec: { group: 'gone.example.io', version: 'v1', groupPriorityMinimum: 1000, versionPriority: 15, service: { namespace: NS, name: 'nobody', port: 443 } },
      },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'poker', namespace: NS },
        rules: [{ apiGroups: [GROUP], resources: ['widgets/poke', 'widgets/console'], verbs: ['update', 'get'] }],
      },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'alice-poker', namespace: NS },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'poker' },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'alice' }],
      },
    ]);
  });

  after(async () => {
    await api.close();
    await new Promise<void>((resolve) => backend.close(() => resolve()));
  });

  async function apply(objects: Array<Record<string, unknown>>): Promise<void> {
    for (const o of objects) {
      const r = await call('POST', pathOf(o), {}, JSON.stringify(o));
      assert.equal(r.status, 201, r.body);
    }
  }

  function pathOf(o: Record<string, unknown>): string {
    const [group, version] = String(o['apiVersion']).includes('/') ? String(o['apiVersion']).split('/') : ['', String(o['apiVersion'])];
    const ns = (o['metadata'] as { namespace?: string }).namespace;
    const plural = { Service: 'services', Endpoints: 'endpoints', APIService: 'apiservices', Role: 'roles', RoleBinding: 'rolebindings' }[String(o['kind'])] ?? '';
    return `${group === '' ? '/api' : `/apis/${group}`}/${version}${ns === undefined ? '' : `/namespaces/${ns}`}/${plural}`;
  }

  function call(method: string, path: string, headers: Record<string, string | string[]>, body?: string): Promise<{ status: number; body: string }> {
    const url = new URL(api.server.url);
    return new Promise((resolve, reject) => {
      const req = request({ host: url.hostname, port: url.port, path, method, headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, agent: false }, (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      });
      req.on('error', reject);
      req.end(body);
    });
  }

  test('a call the caller may make reaches the backend as that user, with the front-proxy certificate and nothing the caller claimed', async () => {
    seen.length = 0;
    const r = await call('PUT', `/apis/${GROUP}/v1/namespaces/${NS}/widgets/w1/poke`, { authorization: 'Bearer alice', 'x-remote-user': 'mallory', 'x-remote-group': 'system:masters', 'impersonate-group': 'system:masters' });
    assert.equal(r.status, 200, r.body);
    assert.equal(seen.length, 1);
    const s = seen[0];
    assert.ok(s !== undefined);
    assert.equal(s.url, `/apis/${GROUP}/v1/namespaces/${NS}/widgets/w1/poke`);
    assert.equal(s.method, 'PUT');
    assert.equal(s.clientCn, FRONT_PROXY_CLIENT);
    assert.equal(s.headers['x-remote-user'], 'alice');
    assert.equal(s.headers['x-remote-group'], 'system:authenticated');
    assert.equal(s.headers.authorization, undefined);
    assert.equal(s.headers['impersonate-group'], undefined);
  });

  test('403 in kube-apiserver\'s words before the backend is called: another namespace, a verb not granted', async () => {
    seen.length = 0;
    const elsewhere = await call('PUT', `/apis/${GROUP}/v1/namespaces/team-b/widgets/w1/poke`, { authorization: 'Bearer alice' });
    assert.equal(elsewhere.status, 403);
    assert.equal(JSON.parse(elsewhere.body).message, `widgets.${GROUP} "w1" is forbidden: User "alice" cannot update resource "widgets/poke" in API group "${GROUP}" in the namespace "team-b"`);
    const del = await call('DELETE', `/apis/${GROUP}/v1/namespaces/${NS}/widgets/w1`, { authorization: 'Bearer alice' });
    assert.equal(del.status, 403);
    assert.match(JSON.parse(del.body).message, /cannot delete resource "widgets"/);
    assert.equal(seen.length, 0);
  });

  test('a websocket is spliced through; the backend\'s refusal of an upgrade reaches the client', async () => {
    const url = new URL(api.server.url);
    const ws = await openTestWebSocket({ host: url.hostname, port: Number(url.port), path: `/apis/${GROUP}/v1/namespaces/${NS}/widgets/w1/console`, headers: { authorization: 'Bearer alice' }, protocol: 'plain.kubevirt.io' });
    try {
      assert.equal(ws.status, 101, ws.body);
      assert.equal(ws.protocol, 'plain.kubevirt.io');
      await eventually(() => ws.frames[0]?.payload.toString(), { deadlineMs: 10_000, what: 'the backend\'s frame' });
      assert.equal(ws.frames[0]?.payload.toString(), 'alice');
    } finally {
      ws.destroy();
    }
    const refused = await openTestWebSocket({ host: url.hostname, port: Number(url.port), path: `/apis/${GROUP}/v1/namespaces/${NS}/widgets/refused/console`, headers: { authorization: 'Bearer alice' } });
    refused.destroy();
    assert.equal(refused.status, 409);
    assert.equal(refused.body, 'not here');
    const forbidden = await openTestWebSocket({ host: url.hostname, port: Number(url.port), path: `/apis/${GROUP}/v1/namespaces/team-b/widgets/w1/console`, headers: { authorization: 'Bearer alice' } });
    forbidden.destroy();
    assert.equal(forbidden.status, 403);
    assert.match(forbidden.body, /User \\"alice\\" cannot get resource \\"widgets\/console\\"/);
  });

  test('503 for an APIService without endpoints and for a backend whose certificate the caBundle does not sign', async () => {
    const gone = await call('GET', '/apis/gone.example.io/v1', {});
    assert.equal(gone.status, 503, gone.body);
    assert.match(JSON.parse(gone.body).message, /service unavailable: service\/nobody in "team-a" is not present/);
    const stored = await call('GET', `/apis/apiregistration.k8s.io/v1/apiservices/v1.${GROUP}`, {});
    const apiService = JSON.parse(stored.body) as { spec: Record<string, unknown> };
    apiService.spec['caBundle'] = Buffer.from(await readFile(join(api.dir, 'front-proxy-ca.crt'), 'utf8')).toString('base64');
    const put = await call('PUT', `/apis/apiregistration.k8s.io/v1/apiservices/v1.${GROUP}`, {}, JSON.stringify(apiService));
    assert.equal(put.status, 200, put.body);
    try {
      const r = await call('GET', `/apis/${GROUP}/v1`, {});
      assert.equal(r.status, 503, r.body);
      assert.match(JSON.parse(r.body).message, /Error trying to reach service/);
    } finally {
      apiService.spec['caBundle'] = Buffer.from(caPem).toString('base64');
      delete (apiService as { metadata?: { resourceVersion?: string } }).metadata?.resourceVersion;
      const back = await call('PUT', `/apis/apiregistration.k8s.io/v1/apiservices/v1.${GROUP}`, {}, JSON.stringify(apiService));
      assert.equal(back.status, 200, back.body);
    }
  });

  test('discovery lists the aggregated group; the requestheader ConfigMap is published; a SubjectAccessReview answers by RBAC', async () => {
    const groups = JSON.parse((await call('GET', '/apis', {})).body) as { groups: Array<{ name: string; preferredVersion: { groupVersion: string } }> };
    assert.equal(groups.groups.find((g) => g.name === GROUP)?.preferredVersion.groupVersion, `${GROUP}/v1`);
    const versions = await call('GET', `/apis/${GROUP}/v1`, {});
    assert.equal(JSON.parse(versions.body).kind, 'APIResourceList');
    const cm = JSON.parse((await call('GET', '/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication', {})).body) as { data: Record<string, string> };
    assert.deepEqual(JSON.parse(cm.data['requestheader-allowed-names'] ?? ''), [FRONT_PROXY_CLIENT]);
    assert.deepEqual(JSON.parse(cm.data['requestheader-username-headers'] ?? ''), ['X-Remote-User']);
    const review = (namespace: string) => JSON.stringify({
      apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview',
      spec: { user: 'alice', groups: ['system:authenticated'], resourceAttributes: { namespace, verb: 'update', group: GROUP, resource: 'widgets', subresource: 'poke', name: 'w1' } },
    });
    const yes = await call('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {}, review(NS));
    assert.equal(yes.status, 201, yes.body);
    assert.equal(JSON.parse(yes.body).status.allowed, true);
    const no = await call('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {}, review('team-b'));
    assert.equal(JSON.parse(no.body).status.allowed, false);
    const bad = await call('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {}, JSON.stringify({ spec: { user: 'alice' } }));
    assert.equal(bad.status, 400);
    assert.match(JSON.parse(bad.body).message, /spec.resourceAttributes is required/);
  });
});
