// ResourceClient against a real HTTP server on port 0: the paths of namespaced, cluster-scoped
// and core kinds, each verb's method, body and content type, and the refusals that are answers
// (a read or delete of what is gone, a delete whose UID precondition names an older object).
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { KubeClient, MERGE_PATCH } from '../src/kube-client.js';
import { LEASES, NODES, PODS, ResourceClient, type KubeResource } from '../src/resource-client.js';
import { sendJson, status, TestServer } from './test-server.js';

const VMIS: KubeResource = { group: 'kubevirt.io', version: 'v1', plural: 'virtualmachineinstances', namespaced: true };

interface Obj {
  metadata: { namespace?: string; name?: string; resourceVersion?: string; uid?: string };
  status?: { phase?: string };
}

async function setup(t: TestContext): Promise<{ server: TestServer; client: KubeClient }> {
  const server = await TestServer.start();
  t.after(() => server.close());
  const client = await KubeClient.create({ server: server.url, insecureSkipTlsVerify: false });
  t.after(() => client.close());
  return { server, client };
}

test('paths: a group, the core group, one namespace, all namespaces, a cluster-scoped kind', async (t) => {
  const { client } = await setup(t);
  const vmis = new ResourceClient<Obj>(client, VMIS);
  assert.equal(vmis.collectionPath('ns 1'), '/apis/kubevirt.io/v1/namespaces/ns%201/virtualmachineinstances');
  assert.equal(vmis.collectionPath(undefined), '/apis/kubevirt.io/v1/virtualmachineinstances');
  assert.equal(vmis.collectionPath(''), '/apis/kubevirt.io/v1/virtualmachineinstances');
  assert.equal(vmis.objectPath('default', 'a/b'), '/apis/kubevirt.io/v1/namespaces/default/virtualmachineinstances/a%2Fb');
  assert.equal(new ResourceClient<Obj>(client, PODS).collectionPath('default'), '/api/v1/namespaces/default/pods');
  assert.equal(new ResourceClient<Obj>(client, NODES).objectPath('ignored', 'node01'), '/api/v1/nodes/node01');
  assert.equal(new ResourceClient<Obj>(client, LEASES).objectPath('kubevirt', 'ctl'), '/apis/coordination.k8s.io/v1/namespaces/kubevirt/leases/ctl');
});

test('every verb: method, path, body, content type; get of a missing object is undefined', async (t) => {
  const { server, client } = await setup(t);
  server.handle((req, res) => {
    if (req.url.pathname.endsWith('/gone')) return sendJson(res, 404, status(404, 'NotFound', 'gone'));
    if (req.method === 'GET' && req.url.pathname.endsWith('/virtualmachineinstances')) {
      return sendJson(res, 200, { items: [{ metadata: { name: 'vm1' } }], metadata: { resourceVersion: '9' } });
    }
    return sendJson(res, 200, req.body === '' ? { metadata: { name: 'vm1' } } : JSON.parse(req.body));
  });
  const vmis = new ResourceClient<Obj>(client, VMIS);
  const signal = AbortSignal.timeout(5_000);
  const vmi: Obj = { metadata: { namespace: 'default', name: 'vm1', resourceVersion: '3' }, status: { phase: 'Running' } };

  assert.deepEqual(await vmis.get('default', 'vm1', signal), { metadata: { name: 'vm1' } });
  assert.equal(await vmis.get('default', 'gone', signal), undefined);
  assert.deepEqual(await vmis.list(undefined, { labelSelector: 'a=b', fieldSelector: 'c=d' }, signal), { items: [{ metadata: { name: 'vm1' } }], resourceVersion: '9' });
  await vmis.create('default', vmi, signal);
  await vmis.replace(vmi, signal);
  await vmis.replaceStatus(vmi, signal);
  await vmis.mergePatch('default', 'vm1', { metadata: { labels: { x: null } } }, signal);
  const seen = server.requests.map((r) => ({ method: r.method, path: r.url.pathname, type: r.headers['content-type'], body: r.body === '' ? undefined : JSON.parse(r.body) as unknown }));
  const one = '/apis/kubevirt.io/v1/namespaces/default/virtualmachineinstances/vm1';
  assert.deepEqual(seen.slice(3), [
    { method: 'POST', path: '/apis/kubevirt.io/v1/namespaces/default/virtualmachineinstances', type: 'application/json', body: vmi },
    { method: 'PUT', path: one, type: 'application/json', body: vmi },
    { method: 'PUT', path: `${one}/status`, type: 'application/json', body: vmi },
    { method: 'PATCH', path: one, type: MERGE_PATCH, body: { metadata: { labels: { x: null } } } },
  ]);
  const list = server.requests[2]?.url.searchParams;
  assert.equal(list?.get('labelSelector'), 'a=b');
  assert.equal(list.get('fieldSelector'), 'c=d');
  assert.equal(list.has('watch'), false);
});

test('delete: true when deleted, false when gone or when the UID precondition names an older object; other refusals throw', async (t) => {
  const { server, client } = await setup(t);
  let answer: { code: number; reason: string } = { code: 200, reason: '' };
  server.handle((_req, res) => (answer.code === 200 ? sendJson(res, 200, {}) : sendJson(res, answer.code, status(answer.code, answer.reason, answer.reason))));
  const pods = new ResourceClient<Obj>(client, PODS);
  const signal = AbortSignal.timeout(5_000);

  assert.equal(await pods.delete('default', 'p1', { uid: 'u1' }, signal), true);
  assert.deepEqual(JSON.parse(server.requests[0]?.body ?? ''), { preconditions: { uid: 'u1' } });
  assert.equal(server.requests[0]?.method, 'DELETE');
  assert.equal(server.requests[0].url.pathname, '/api/v1/namespaces/default/pods/p1');
  assert.equal(await pods.delete('default', 'p1', {}, signal), true);
  assert.equal(server.requests[1]?.body, '', 'no precondition, no body');

  answer = { code: 404, reason: 'NotFound' };
  assert.equal(await pods.delete('default', 'p1', {}, signal), false);
  answer = { code: 409, reason: 'Conflict' };
  assert.equal(await pods.delete('default', 'p1', { uid: 'u1' }, signal), false);
  await assert.rejects(pods.delete('default', 'p1', {}, signal), { code: 'KUBE_ERR_CONFLICT' });
  answer = { code: 403, reason: 'Forbidden' };
  await assert.rejects(pods.delete('default', 'p1', { uid: 'u1' }, signal), { code: 'KUBE_ERR_FORBIDDEN' });
  await assert.rejects(pods.get('default', 'p1', signal), { code: 'KUBE_ERR_FORBIDDEN' });
});
