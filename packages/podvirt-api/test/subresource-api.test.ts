import assert from 'node:assert/strict';
import { request } from 'node:https';
import { after, before, beforeEach, describe, test } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import type { VirtualMachineInstance } from '@podvirt/api';
import { eventually, openTestWebSocket } from '@podvirt/test-support';
import { pino } from 'pino';
import { SecureServer } from '../src/server/secure-server.js';
import type { AccessQuestion } from '../src/subresources/access-review.js';
import type { RequestHeaderConfig } from '../src/subresources/request-header-auth.js';
import { parseRequestHeaderConfig } from '../src/subresources/request-header-auth.js';
import { SubresourceApi } from '../src/subresources/subresource-api.js';
import { issueClientCert, issueServingCert, makeCa, type PemPair } from '../src/tls/certificate-authority.js';
import { startFakeNodeApi, type FakeNodeApi } from './fake-node-api.js';

const BASE = '/apis/subresources.kubevirt.io/v1/namespaces';
const HOUR = 3_600_000;

interface Reply { status: number; json: Record<string, unknown> | undefined; text: string }

function vmi(namespace: string, name: string, phase: string, nodeName = 'node-a'): VirtualMachineInstance {
  return { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', metadata: { namespace, name, uid: `${name}-uid` }, spec: { domain: { devices: {} } }, status: { phase, nodeName } } as unknown as VirtualMachineInstance;
}

describe('the subresource API over HTTPS, as the aggregator calls it', () => {
  let serverCa: PemPair;
  let proxyCa: PemPair;
  let proxy: PemPair;
  let stranger: PemPair;
  let config: RequestHeaderConfig;
  let handler: FakeNodeApi;
  let api: SubresourceApi;
  let server: SecureServer;
  const questions: AccessQuestion[] = [];
  const vmis = new Map<string, VirtualMachineInstance>();
  // user → "verb resource/subresource namespace" they may do.
  const grants = new Map<string, Set<string>>();

  before(async () => {
    const now = new Date();
    serverCa = await makeCa('apiserver CA', now, 48 * HOUR);
    proxyCa = await makeCa('front-proxy CA', now, 48 * HOUR);
    proxy = await issueClientCert(proxyCa, 'front-proxy-client', now, HOUR);
    stranger = await issueClientCert(proxyCa, 'someone-else', now, HOUR);
    const parsed = parseRequestHeaderConfig({
      'requestheader-client-ca-file': proxyCa.cert,
      'requestheader-allowed-names': '["front-proxy-client"]',
      'requestheader-username-headers': '["X-Remote-User"]',
      'requestheader-group-headers': '["X-Remote-Group"]',
      'requestheader-extra-headers-prefix': '["X-Remote-Extra-"]',
    });
    assert.ok(typeof parsed !== 'string', String(parsed));
    config = parsed;
    handler = await startFakeNodeApi(new Map([
      ['a/paused', { code: grpc.status.FAILED_PRECONDITION, details: 'VMI a/paused is already paused' }],
      ['a/vanished', { code: grpc.status.NOT_FOUND, details: 'no VMI a/vanished on node node-a' }],
    ]));
    api = new SubresourceApi({
      log: pino({ level: 'silent' }),
      identities: { current: () => Promise.resolve(config) },
      review: (q) => {
        questions.push(q);
        const ok = grants.get(q.user.name)?.has(`${q.verb} ${q.resource}/${q.subresource} ${q.namespace}`) === true;
        return Promise.resolve(ok ? { allowed: true } : { allowed: false, reason: '' });
      },
      vmis: { get: (ns, name) => Promise.resolve(vmis.get(`${ns}/${name}`)) },
      handlers: handler.nodes,
      attachTimeoutMs: 5_000,
    });
    server = await SecureServer.listen({
      host: '127.0.0.1', port: 0, serving: await issueServingCert(serverCa, ['127.0.0.1'], now, HOUR),
      handler: (req, res) => api.serve(req, res),
      upgrade: (req, socket, head) => api.upgrade(req, socket, head),
    });
  });
  after(async () => {
    await api.close();
    await server.close();
    await handler.close();
  });
  beforeEach(() => {
    questions.length = 0;
    handler.calls.length = 0;
    vmis.clear();
    for (const v of [vmi('a', 'vm1', 'Running'), vmi('a', 'paused', 'Running'), vmi('a', 'vanished', 'Running'), vmi('a', 'booting', 'Scheduled'), vmi('a', 'offline', 'Running', 'node-down'), vmi('b', 'vm2', 'Running')]) {
      vmis.set(`${v.metadata?.namespace ?? ''}/${v.metadata?.name ?? ''}`, v);
    }
    grants.clear();
    grants.set('alice', new Set(['update virtualmachineinstances/pause a', 'update virtualmachineinstances/unpause a', 'update virtualmachineinstances/freeze a', 'get virtualmachineinstances/console a', 'get virtualmachineinstances/guestosinfo a', 'get virtualmachineinstances/userlist a']));
  });

  // One header line per group, as the aggregator sends them.
  const asUser = (user: string, groups: string[] = ['tenants', 'system:authenticated']): Record<string, string | string[]> => ({ 'x-remote-user': user, 'x-remote-group': groups, 'x-remote-extra-scopes%2Fa': 'one' });

  function call(method: string, path: string, o: { headers?: Record<string, string | string[]>; body?: string; client?: PemPair | null } = {}): Promise<Reply> {
    const client = o.client === undefined ? proxy : o.client;
    return new Promise((resolve, reject) => {
      const headers = { ...(o.body === undefined ? {} : { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(o.body)) }), ...o.headers };
      const req = request({ host: '127.0.0.1', port: server.port, path, method, ca: serverCa.cert, agent: false, headers, ...(client === null ? {} : { cert: client.cert, key: client.key }) }, (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => {
          let json: Record<string, unknown> | undefined;
          try {
            json = text === '' ? undefined : (JSON.parse(text) as Record<string, unknown>);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, json, text });
        });
      });
      req.on('error', reject);
      req.end(o.body);
    });
  }

  test('discovery: the group and its resources, with the verb RBAC checks', async () => {
    const group = await call('GET', '/apis/subresources.kubevirt.io', { client: null });
    assert.equal(group.status, 200);
    assert.deepEqual((group.json?.['preferredVersion'] as { groupVersion: string }).groupVersion, 'subresources.kubevirt.io/v1');
    const list = await call('GET', '/apis/subresources.kubevirt.io/v1', { client: null });
    const resources = list.json?.['resources'] as Array<{ name: string; verbs: string[]; namespaced: boolean }>;
    assert.deepEqual(resources.find((r) => r.name === 'virtualmachineinstances/pause'), { name: 'virtualmachineinstances/pause', singularName: '', namespaced: true, kind: '', verbs: ['update'] });
    assert.deepEqual(resources.find((r) => r.name === 'virtualmachineinstances/console')?.verbs, ['get']);
    assert.equal(resources.length, 11);
  });

  test('pause and unpause as a user the SubjectAccessReview allows, forwarded to the node of the VMI', async () => {
    const paused = await call('PUT', `${BASE}/a/virtualmachineinstances/vm1/pause`, { headers: asUser('alice') });
    assert.equal(paused.status, 200, paused.text);
    const unpaused = await call('PUT', `${BASE}/a/virtualmachineinstances/vm1/unpause`, { headers: asUser('alice'), body: '{}' });
    assert.equal(unpaused.status, 200, unpaused.text);
    assert.deepEqual(handler.calls, ['pause a/vm1', 'unpause a/vm1']);
    assert.deepEqual(questions[0], {
      user: { name: 'alice', groups: ['tenants', 'system:authenticated'], extra: { 'scopes/a': ['one'] } },
      verb: 'update', namespace: 'a', resource: 'virtualmachineinstances', subresource: 'pause', name: 'vm1',
    });
  });

  test('403 from the SubjectAccessReview names the user, the verb and the subresource; the handler is not called', async () => {
    const other = await call('PUT', `${BASE}/b/virtualmachineinstances/vm2/pause`, { headers: asUser('alice') });
    assert.equal(other.status, 403);
    assert.equal(other.json?.['reason'], 'Forbidden');
    assert.match(String(other.json?.['message']), /User "alice" cannot update resource "virtualmachineinstances\/pause" in API group "subresources.kubevirt.io" in the namespace "b"/);
    const ungranted = await call('PUT', `${BASE}/a/virtualmachineinstances/vm1/reset`, { headers: asUser('alice') });
    assert.equal(ungranted.status, 403);
    assert.match(String(ungranted.json?.['message']), /User "alice" cannot update resource "virtualmachineinstances\/reset"/);
    assert.deepEqual(handler.calls, []);
  });

  test('401 without the front proxy: no certificate, a certificate not in the allowed names, one of another CA, no user', async () => {
    const path = `${BASE}/a/virtualmachineinstances/vm1/pause`;
    const none = await call('PUT', path, { headers: asUser('alice'), client: null });
    assert.equal(none.status, 401);
    assert.match(String(none.json?.['message']), /no client certificate/);
    const wrongName = await call('PUT', path, { headers: asUser('alice'), client: stranger });
    assert.equal(wrongName.status, 401);
    assert.match(String(wrongName.json?.['message']), /"someone-else" is not among requestheader-allowed-names/);
    const otherCa = await issueClientCert(serverCa, 'front-proxy-client', new Date(), HOUR);
    const forged = await call('PUT', path, { headers: asUser('alice'), client: otherCa });
    assert.equal(forged.status, 401);
    assert.match(String(forged.json?.['message']), /not signed by the requestheader CA/);
    const nobody = await call('PUT', path, {});
    assert.equal(nobody.status, 401);
    assert.match(String(nobody.json?.['message']), /no user in x-remote-user/);
    assert.deepEqual(questions, []);
  });

  test('404 for a missing VMI, 409 with the phase for one not running, 409 for what the handler refuses', async () => {
    grants.get('alice')?.add('update virtualmachineinstances/pause a');
    const missing = await call('PUT', `${BASE}/a/virtualmachineinstances/nope/pause`, { headers: asUser('alice') });
    assert.equal(missing.status, 404);
    assert.match(String(missing.json?.['message']), /virtualmachineinstances.kubevirt.io "nope" not found/);
    const booting = await call('PUT', `${BASE}/a/virtualmachineinstances/booting/pause`, { headers: asUser('alice') });
    assert.equal(booting.status, 409);
    assert.match(String(booting.json?.['message']), /a\/booting is not running: phase Scheduled/);
    const already = await call('PUT', `${BASE}/a/virtualmachineinstances/paused/pause`, { headers: asUser('alice') });
    assert.equal(already.status, 409);
    assert.match(String(already.json?.['message']), /already paused/);
    const vanished = await call('PUT', `${BASE}/a/virtualmachineinstances/vanished/pause`, { headers: asUser('alice') });
    assert.equal(vanished.status, 404);
  });

  test('503 naming the node when its handler does not answer', async () => {
    const down = await call('PUT', `${BASE}/a/virtualmachineinstances/offline/pause`, { headers: asUser('alice') });
    assert.equal(down.status, 503);
    assert.match(String(down.json?.['message']), /the handler of node node-down is unreachable/);
  });

  test('400 naming the field for a malformed, wrong or oversized body; a dry run checks without acting', async () => {
    const path = `${BASE}/a/virtualmachineinstances/vm1/freeze`;
    const notJson = await call('PUT', path, { headers: asUser('alice'), body: '{"unfreezeTimeout":' });
    assert.equal(notJson.status, 400);
    assert.match(String(notJson.json?.['message']), /^body: not valid JSON/);
    const noTimeout = await call('PUT', path, { headers: asUser('alice'), body: '{}' });
    assert.equal(noTimeout.status, 400);
    assert.match(String(noTimeout.json?.['message']), /^unfreezeTimeout: required/);
    const badTimeout = await call('PUT', path, { headers: asUser('alice'), body: '{"unfreezeTimeout":"soon"}' });
    assert.match(String(badTimeout.json?.['message']), /^unfreezeTimeout: "soon" is not a duration/);
    const huge = await call('PUT', path, { headers: asUser('alice'), body: JSON.stringify({ unfreezeTimeout: '5m', pad: 'x'.repeat(70 * 1024) }) });
    assert.equal(huge.status, 400);
    assert.match(String(huge.json?.['message']), /^body: larger than 65536 bytes/);
    const badDryRun = await call('PUT', `${BASE}/a/virtualmachineinstances/vm1/pause`, { headers: asUser('alice'), body: '{"dryRun":"yes"}' });
    assert.match(String(badDryRun.json?.['message']), /^dryRun: must be a list/);
    assert.deepEqual(handler.calls, []);
    const dry = await call('PUT', `${BASE}/a/virtualmachineinstances/vm1/pause`, { headers: asUser('alice'), body: '{"dryRun":["All"]}' });
    assert.equal(dry.status, 200);
    assert.deepEqual(handler.calls, []);
    const frozen = await call('PUT', path, { headers: asUser('alice'), body: '{"unfreezeTimeout":"5m"}' });
    assert.equal(frozen.status, 200, frozen.text);
    assert.deepEqual(handler.calls, ['freeze a/vm1 timeout=300']);
  });

  test('the guest agent queries answer in KubeVirt\'s JSON', async () => {
    const info = await call('GET', `${BASE}/a/virtualmachineinstances/vm1/guestosinfo`, { headers: asUser('alice') });
    assert.equal(info.status, 200, info.text);
    assert.equal(info.json?.['kind'], 'VirtualMachineInstanceGuestAgentInfo');
    assert.equal((info.json?.['os'] as { prettyName: string }).prettyName, 'Alpine 3.20');
    const users = await call('GET', `${BASE}/a/virtualmachineinstances/vm1/userlist`, { headers: asUser('alice') });
    assert.deepEqual(users.json?.['items'], [{ userName: 'root', domain: '', loginTime: 1700000000.5 }]);
  });

  test('wrong method 405, unknown subresource 404, a VirtualMachine subresource 404 saying it is not served yet', async () => {
    assert.equal((await call('GET', `${BASE}/a/virtualmachineinstances/vm1/pause`, { headers: asUser('alice') })).status, 405);
    assert.equal((await call('PUT', `${BASE}/a/virtualmachineinstances/vm1/explode`, { headers: asUser('alice') })).status, 404);
    const vm = await call('PUT', `${BASE}/a/virtualmachines/vm1/start`, { headers: asUser('alice') });
    assert.equal(vm.status, 404);
    assert.match(String(vm.json?.['message']), /virtualmachines\/start is not served by podvirt-api yet/);
  });

  test('console: a websocket in plain.kubevirt.io framing, both ways; closing it detaches, the guest stays', async () => {
    const ws = await openTestWebSocket({ port: server.port, path: `${BASE}/a/virtualmachineinstances/vm1/console`, ca: serverCa.cert, cert: proxy.cert, key: proxy.key, headers: asUser('alice'), protocol: 'plain.kubevirt.io' });
    assert.equal(ws.status, 101, ws.body);
    assert.equal(ws.protocol, 'plain.kubevirt.io');
    ws.send('echo hi\n');
    const echoed = await eventually(() => ws.frames.find((f) => f.payload.toString() === 'ECHO HI\n'));
    assert.equal(echoed.opcode, 0x2);
    ws.send(Buffer.from([0x03, 0xe8]), 0x8);
    await ws.closed;
    await eventually(() => handler.streamEnds.includes('ended console a/vm1'));
    assert.deepEqual(handler.calls, ['console a/vm1']);
  });

  test('console refusals come before the handshake, as HTTP statuses', async () => {
    const open = (user: string, name: string, ns = 'a') => openTestWebSocket({ port: server.port, path: `${BASE}/${ns}/virtualmachineinstances/${name}/console`, ca: serverCa.cert, cert: proxy.cert, key: proxy.key, headers: asUser(user), protocol: 'plain.kubevirt.io' });
    const forbidden = await open('alice', 'vm2', 'b');
    assert.equal(forbidden.status, 403);
    assert.match(forbidden.body, /User \\"alice\\" cannot get resource \\"virtualmachineinstances\/console\\"/);
    grants.get('alice')?.add('get virtualmachineinstances/console a');
    assert.equal((await open('alice', 'booting')).status, 409);
    const busy = await open('alice', 'paused');
    assert.equal(busy.status, 409);
    const down = await open('alice', 'offline');
    assert.equal(down.status, 503);
    assert.match(down.body, /node-down/);
    const wrongProtocol = await openTestWebSocket({ port: server.port, path: `${BASE}/a/virtualmachineinstances/vm1/console`, ca: serverCa.cert, cert: proxy.cert, key: proxy.key, headers: asUser('alice'), protocol: 'v4.channel.k8s.io' });
    assert.equal(wrongProtocol.status, 400);
  });

  test('a frame over the bound closes the websocket with 1009; the handler never gets it', async () => {
    const ws = await openTestWebSocket({ port: server.port, path: `${BASE}/a/virtualmachineinstances/vm1/console`, ca: serverCa.cert, cert: proxy.cert, key: proxy.key, headers: asUser('alice'), protocol: 'plain.kubevirt.io' });
    assert.equal(ws.status, 101, ws.body);
    ws.sendRaw(Buffer.from([0x82, 0xff, 0, 0, 0, 0, 0, 0x20, 0, 0]));
    await ws.closed;
    assert.equal(ws.frames.at(-1)?.payload.readUInt16BE(0), 1009);
    await eventually(() => handler.streamEnds.includes('ended console a/vm1'));
  });

  // Last: it closes the API.
  test('podvirt-api stopping mid-console: the client gets a close frame saying so, the handler only sees the stream cancelled', async () => {
    const ws = await openTestWebSocket({ port: server.port, path: `${BASE}/a/virtualmachineinstances/vm1/console`, ca: serverCa.cert, cert: proxy.cert, key: proxy.key, headers: asUser('alice'), protocol: 'plain.kubevirt.io' });
    assert.equal(ws.status, 101, ws.body);
    await eventually(() => handler.openStreams.has('console a/vm1'));
    handler.streamEnds.length = 0;
    await api.close();
    await ws.closed;
    const close = ws.frames.at(-1);
    assert.equal(close?.opcode, 0x8);
    assert.equal(close.payload.readUInt16BE(0), 1001);
    assert.match(close.payload.subarray(2).toString(), /podvirt-api is stopping/);
    await eventually(() => handler.streamEnds.includes('cancelled console a/vm1'));
    assert.deepEqual(handler.calls.filter((c) => !c.startsWith('console')), []);
  });
});
