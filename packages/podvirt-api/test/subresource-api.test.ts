import assert from 'node:assert/strict';
import { request } from 'node:https';
import { after, before, beforeEach, describe, test } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import type { HotplugSpec, RunStrategy, VirtualMachine, VirtualMachineInstance, VirtualMachineInstanceMigration, VmSpec, VmStateApi, VolumeApi } from '@podvirt/api';
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

function vm(namespace: string, name: string, runStrategy: RunStrategy): VirtualMachine {
  return { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', metadata: { namespace, name, resourceVersion: '7' }, spec: { runStrategy, template: { spec: { domain: { devices: {} } } } } };
}

/** VMs in memory, VMIs from the test's map; every write is recorded. */
class FakeVmStates implements VmStateApi {
  readonly vms = new Map<string, VirtualMachine>();
  readonly writes: string[] = [];
  constructor(private readonly vmis: Map<string, VirtualMachineInstance>) {}
  readVm(ns: string, name: string): Promise<VirtualMachine | undefined> {
    return Promise.resolve(this.vms.get(`${ns}/${name}`));
  }
  readVmi(ns: string, name: string): Promise<VirtualMachineInstance | undefined> {
    return Promise.resolve(this.vmis.get(`${ns}/${name}`));
  }
  replaceVmStatus(v: VirtualMachine): Promise<'written' | 'stale'> {
    this.writes.push(`status ${v.metadata.namespace ?? ''}/${v.metadata.name ?? ''} ${JSON.stringify(v.status?.stateChangeRequests)}`);
    return Promise.resolve('written');
  }
  patchVmSpec(ns: string, name: string, spec: Partial<Pick<VmSpec, 'running' | 'runStrategy'>>): Promise<'written' | 'stale'> {
    this.writes.push(`spec ${ns}/${name} ${JSON.stringify(spec)}`);
    return Promise.resolve('written');
  }
  setVmiGracePeriod(ns: string, name: string, seconds: number): Promise<void> {
    this.writes.push(`grace ${ns}/${name} ${seconds}`);
    return Promise.resolve();
  }
}

/** The hotplug edits of the test's VMIs, written into the map; every write is recorded. */
class FakeVolumes implements VolumeApi {
  readonly writes: string[] = [];
  constructor(private readonly vmis: Map<string, VirtualMachineInstance>, private readonly vms: Map<string, VirtualMachine>) {}
  readVmi(ns: string, name: string): Promise<VirtualMachineInstance | undefined> {
    return Promise.resolve(this.vmis.get(`${ns}/${name}`));
  }
  readVm(ns: string, name: string): Promise<VirtualMachine | undefined> {
    return Promise.resolve(this.vms.get(`${ns}/${name}`));
  }
  patchVmiVolumes(ns: string, name: string, spec: HotplugSpec): Promise<'written' | 'stale'> {
    this.writes.push(`vmi ${ns}/${name} ${(spec.volumes ?? []).map((v) => v.name).join(',')} ${JSON.stringify(spec.domain.devices?.disks?.at(-1))}`);
    const v = this.vmis.get(`${ns}/${name}`);
    if (v !== undefined) this.vmis.set(`${ns}/${name}`, { ...v, spec: { ...v.spec, ...spec } as VirtualMachineInstance['spec'] });
    return Promise.resolve('written');
  }
  patchVmVolumes(ns: string, name: string, spec: HotplugSpec): Promise<'written' | 'stale'> {
    this.writes.push(`vm ${ns}/${name} ${(spec.volumes ?? []).map((v) => v.name).join(',')}`);
    const v = this.vms.get(`${ns}/${name}`);
    if (v !== undefined) this.vms.set(`${ns}/${name}`, { ...v, spec: { ...v.spec, template: { ...v.spec.template, spec: { ...v.spec.template.spec, ...spec } as VmSpec['template']['spec'] } } });
    return Promise.resolve('written');
  }
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
  const vmStates = new FakeVmStates(vmis);
  const volumes = new FakeVolumes(vmis, vmStates.vms);
  const migrations: VirtualMachineInstanceMigration[] = [];
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
      vms: vmStates,
      volumes,
      migrations: { create: (_ns, m) => Promise.resolve(migrations.push(m)) },
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
    vmStates.vms.clear();
    vmStates.writes.length = 0;
    volumes.writes.length = 0;
    migrations.length = 0;
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
    assert.deepEqual(resources.find((r) => r.name === 'virtualmachines/migrate')?.verbs, ['update']);
    assert.deepEqual(resources.find((r) => r.name === 'virtualmachineinstances/addvolume')?.verbs, ['update']);
    assert.deepEqual(resources.find((r) => r.name === 'virtualmachines/addvolume')?.verbs, ['update']);
    assert.equal(resources.length, 19);
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

  test('wrong method 405, unknown subresource 404, for VMIs and VMs', async () => {
    assert.equal((await call('GET', `${BASE}/a/virtualmachineinstances/vm1/pause`, { headers: asUser('alice') })).status, 405);
    assert.equal((await call('PUT', `${BASE}/a/virtualmachineinstances/vm1/explode`, { headers: asUser('alice') })).status, 404);
    assert.equal((await call('POST', `${BASE}/a/virtualmachines/vm1/start`, { headers: asUser('alice') })).status, 405);
    const unknown = await call('PUT', `${BASE}/a/virtualmachines/vm1/pause`, { headers: asUser('alice') });
    assert.equal(unknown.status, 404);
    assert.match(String(unknown.json?.['message']), /virtualmachines\/pause is not a subresource podvirt serves/);
  });

  describe('virtualmachineinstances/{addvolume,removevolume}', () => {
    const put = (ns: string, name: string, sub: string, body?: string) => call('PUT', `${BASE}/${ns}/virtualmachineinstances/${name}/${sub}`, { headers: asUser('alice'), ...(body === undefined ? {} : { body }) });
    const grant = (...subs: string[]) => subs.forEach((sub) => grants.get('alice')?.add(`update virtualmachineinstances/${sub} a`));
    const ADD = { name: 'data', disk: { disk: { bus: 'scsi' }, serial: 'D1' }, volumeSource: { persistentVolumeClaim: { claimName: 'claim-1' } } };

    test('KubeVirt\'s AddVolumeOptions hot-plug the claim into the running VMI\'s spec (202), RemoveVolumeOptions take it away; no handler call', async () => {
      grant('addvolume', 'removevolume');
      const added = await put('a', 'vm1', 'addvolume', JSON.stringify(ADD));
      assert.equal(added.status, 202, added.text);
      assert.equal(added.text, '');
      assert.deepEqual(questions.at(-1), { user: { name: 'alice', groups: ['tenants', 'system:authenticated'], extra: { 'scopes/a': ['one'] } }, verb: 'update', namespace: 'a', resource: 'virtualmachineinstances', subresource: 'addvolume', name: 'vm1' });
      assert.deepEqual(vmis.get('a/vm1')?.spec.volumes, [{ name: 'data', persistentVolumeClaim: { claimName: 'claim-1', hotpluggable: true } }]);
      const removed = await put('a', 'vm1', 'removevolume', '{"name":"data"}');
      assert.equal(removed.status, 202, removed.text);
      assert.deepEqual(volumes.writes, ['vmi a/vm1 data {"disk":{"bus":"scsi"},"serial":"D1","name":"data"}', 'vmi a/vm1  undefined']);
      assert.deepEqual(handler.calls, []);
    });

    test('refusals: a bad body 400 naming the field, a clash 400, a VMI not running 409 with its phase, a missing one 404, another user 403; a dry run writes nothing', async () => {
      grant('addvolume', 'removevolume');
      const cases: [string, string, string | undefined, number, RegExp][] = [
        ['vm1', 'addvolume', undefined, 400, /^body: must be a JSON object, KubeVirt's AddVolumeOptions/],
        ['vm1', 'addvolume', JSON.stringify({ ...ADD, disk: { disk: { bus: 'virtio' } } }), 400, /^disk\.disk\.bus: Unsupported value: "virtio"/],
        ['vm1', 'addvolume', JSON.stringify({ ...ADD, name: 'Bad_Name' }), 400, /^name: Invalid value/],
        ['vm1', 'addvolume', JSON.stringify({ ...ADD, dryRun: 'yes' }), 400, /^dryRun: must be a list/],
        ['vm1', 'removevolume', '{}', 400, /^name: Required value/],
        ['vm1', 'removevolume', '{"name":"data"}', 400, /VMI a\/vm1 refuses the change: name: Not found/],
        ['booting', 'addvolume', JSON.stringify(ADD), 409, /VMI a\/booting is Scheduled, not Running/],
        ['nope', 'addvolume', JSON.stringify(ADD), 404, /virtualmachineinstances.kubevirt.io "nope" not found/],
        ['vm1', 'addvolume', JSON.stringify({ ...ADD, dryRun: ['All'] }), 202, /^$/],
      ];
      for (const [name, sub, body, status, message] of cases) {
        const out = await put('a', name, sub, body);
        assert.equal(out.status, status, `${name} ${sub} ${body ?? ''}: ${out.text}`);
        assert.match(String(out.json?.['message'] ?? ''), message, `${name} ${sub} ${body ?? ''}`);
      }
      const other = await call('PUT', `${BASE}/b/virtualmachineinstances/vm2/addvolume`, { headers: asUser('alice'), body: JSON.stringify(ADD) });
      assert.equal(other.status, 403);
      assert.match(String(other.json?.['message']), /cannot update resource "virtualmachineinstances\/addvolume"/);
      assert.deepEqual(volumes.writes, []);
    });
  });

  describe('virtualmachines/{addvolume,removevolume}', () => {
    const put = (ns: string, name: string, sub: string, body?: string) => call('PUT', `${BASE}/${ns}/virtualmachines/${name}/${sub}`, { headers: asUser('alice'), ...(body === undefined ? {} : { body }) });
    const ADD = { name: 'keep', disk: { disk: { bus: 'scsi' } }, volumeSource: { persistentVolumeClaim: { claimName: 'claim-k' } } };

    test('the running VMI and the VM\'s template both gain the volume (202), and both lose it; asked as virtualmachines/<sub>; refusals named', async () => {
      vmis.set('a/vmv', vmi('a', 'vmv', 'Running'));
      vmStates.vms.set('a/vmv', vm('a', 'vmv', 'Always'));
      vmStates.vms.set('a/halted', vm('a', 'halted', 'Halted'));
      volumes.writes.length = 0;
      const refused = await put('a', 'vmv', 'addvolume', JSON.stringify(ADD));
      assert.equal(refused.status, 403, refused.text);
      assert.match(String(refused.json?.['message']), /cannot update resource "virtualmachines\/addvolume"/);
      grants.get('alice')?.add('update virtualmachines/addvolume a');
      grants.get('alice')?.add('update virtualmachines/removevolume a');
      const added = await put('a', 'vmv', 'addvolume', JSON.stringify(ADD));
      assert.equal(added.status, 202, added.text);
      assert.deepEqual(questions.at(-1), { user: { name: 'alice', groups: ['tenants', 'system:authenticated'], extra: { 'scopes/a': ['one'] } }, verb: 'update', namespace: 'a', resource: 'virtualmachines', subresource: 'addvolume', name: 'vmv' });
      assert.deepEqual(vmStates.vms.get('a/vmv')?.spec.template.spec.volumes, [{ name: 'keep', persistentVolumeClaim: { claimName: 'claim-k', hotpluggable: true } }]);
      assert.deepEqual(vmis.get('a/vmv')?.spec.volumes, [{ name: 'keep', persistentVolumeClaim: { claimName: 'claim-k', hotpluggable: true } }]);
      const cases: [string, string, string, number, RegExp][] = [
        ['vmv', 'addvolume', JSON.stringify(ADD), 400, /^VMI a\/vmv refuses the change: name: Duplicate value/],
        ['gone', 'addvolume', JSON.stringify(ADD), 404, /^virtualmachines.kubevirt.io "gone" not found$/],
        ['halted', 'addvolume', JSON.stringify(ADD), 409, /"halted": the VM has no running VMI to hot-plug into/],
      ];
      for (const [name, sub, body, status, message] of cases) {
        const out = await put('a', name, sub, body);
        assert.equal(out.status, status, `${name} ${sub}: ${out.text}`);
        assert.match(String(out.json?.['message'] ?? ''), message, `${name} ${sub}`);
      }
      const removed = await put('a', 'vmv', 'removevolume', '{"name":"keep"}');
      assert.equal(removed.status, 202, removed.text);
      assert.deepEqual(vmStates.vms.get('a/vmv')?.spec.template.spec.volumes, []);
      assert.deepEqual(volumes.writes, ['vmi a/vmv keep {"disk":{"bus":"scsi"},"name":"keep"}', 'vm a/vmv keep', 'vmi a/vmv  undefined', 'vm a/vmv ']);
      assert.deepEqual(handler.calls.filter((c) => JSON.stringify(c).includes('vmv')), []);
    });
  });

  describe('virtualmachines/{start,stop,restart,migrate}', () => {
    const put = (ns: string, name: string, sub: string, body?: string) => call('PUT', `${BASE}/${ns}/virtualmachines/${name}/${sub}`, { headers: asUser('alice'), ...(body === undefined ? {} : { body }) });
    const grant = (...subs: string[]) => subs.forEach((sub) => grants.get('alice')?.add(`update virtualmachines/${sub} a`));

    test('start of a Halted VM sets runStrategy Always (202); stop of an Always one Halted; the SubjectAccessReview asks for virtualmachines/<sub>', async () => {
      grant('start', 'stop');
      vmStates.vms.set('a/h', vm('a', 'h', 'Halted'));
      const started = await put('a', 'h', 'start');
      assert.equal(started.status, 202, started.text);
      assert.equal(started.text, '');
      assert.deepEqual(questions.at(-1), { user: { name: 'alice', groups: ['tenants', 'system:authenticated'], extra: { 'scopes/a': ['one'] } }, verb: 'update', namespace: 'a', resource: 'virtualmachines', subresource: 'start', name: 'h' });
      vmStates.vms.set('a/vm1', vm('a', 'vm1', 'Always'));
      assert.equal((await put('a', 'vm1', 'stop', '{"gracePeriod":5}')).status, 202);
      assert.deepEqual(vmStates.writes, ['spec a/h {"runStrategy":"Always"}', 'grace a/vm1 5', 'spec a/vm1 {"runStrategy":"Halted"}']);
      assert.deepEqual(handler.calls, []);
    });

    test('Manual: start and restart are state change requests; restart with gracePeriodSeconds 0 sets the VMI grace to 1 first', async () => {
      grant('start', 'restart');
      vmStates.vms.set('a/m', vm('a', 'm', 'Manual'));
      assert.equal((await put('a', 'm', 'start', '{"paused":false}')).status, 202);
      vmStates.vms.set('a/vm1', vm('a', 'vm1', 'Manual'));
      assert.equal((await put('a', 'vm1', 'restart', '{"gracePeriodSeconds":0}')).status, 202);
      assert.deepEqual(vmStates.writes, ['status a/m [{"action":"Start"}]', 'grace a/vm1 1', 'status a/vm1 [{"action":"Stop","uid":"vm1-uid"},{"action":"Start"}]']);
    });

    test('KubeVirt\'s conflicts are 409 naming why; a missing VM 404; a refused user 403; nothing written', async () => {
      grant('start', 'stop', 'restart');
      vmStates.vms.set('a/vm1', vm('a', 'vm1', 'Manual'));
      vmStates.vms.set('a/h', vm('a', 'h', 'Halted'));
      vmStates.vms.set('a/al', vm('a', 'al', 'Always'));
      const running = await put('a', 'vm1', 'start');
      assert.equal(running.status, 409);
      assert.equal(running.json?.['reason'], 'Conflict');
      assert.match(String(running.json?.['message']), /virtualmachines.kubevirt.io "vm1": VM a\/vm1 is already running/);
      assert.match(String((await put('a', 'h', 'stop')).json?.['message']), /VM a\/h is not running/);
      assert.match(String((await put('a', 'h', 'restart')).json?.['message']), /runStrategy Halted: it does not restart/);
      assert.match(String((await put('a', 'al', 'start')).json?.['message']), /runStrategy Always: it starts by itself/);
      const gone = await put('a', 'nope', 'start');
      assert.equal(gone.status, 404);
      assert.match(String(gone.json?.['message']), /virtualmachines.kubevirt.io "nope" not found/);
      const other = await put('a', 'vm1', 'migrate');
      assert.equal(other.status, 403);
      assert.match(String(other.json?.['message']), /User "alice" cannot update resource "virtualmachines\/migrate" in API group "subresources.kubevirt.io" in the namespace "a"/);
      assert.deepEqual(vmStates.writes, []);
    });

    test('400 naming the field of a bad body; a dry run decides without writing', async () => {
      grant('start', 'stop', 'restart', 'migrate');
      vmStates.vms.set('a/vm1', vm('a', 'vm1', 'Manual'));
      vmStates.vms.set('a/h', vm('a', 'h', 'Halted'));
      assert.match(String((await put('a', 'vm1', 'stop', '{"gracePeriod":-1}')).json?.['message']), /^gracePeriod: must be a whole number of seconds/);
      assert.match(String((await put('a', 'vm1', 'restart', '{"gracePeriodSeconds":30}')).json?.['message']), /^gracePeriodSeconds: a forced restart takes only 0/);
      const paused = await put('a', 'h', 'start', '{"paused":true}');
      assert.equal(paused.status, 400);
      assert.match(String(paused.json?.['message']), /^paused: Unsupported value: true/);
      assert.match(String((await put('a', 'vm1', 'migrate', '{"addedNodeSelector":{"zone":"b"}}')).json?.['message']), /^addedNodeSelector: Unsupported value/);
      assert.match(String((await put('a', 'vm1', 'start', '[]')).json?.['message']), /^body: must be a JSON object/);
      assert.equal((await put('a', 'h', 'start', '{"dryRun":["All"]}')).status, 202);
      assert.equal((await put('a', 'vm1', 'start', '{"dryRun":["All"]}')).status, 409);
      assert.equal((await put('a', 'vm1', 'migrate', '{"dryRun":["All"]}')).status, 202);
      assert.deepEqual(vmStates.writes, []);
      assert.deepEqual(migrations, []);
    });

    test('migrate creates a VirtualMachineInstanceMigration for a running VMI (202); 409 with the phase otherwise', async () => {
      grant('migrate');
      vmStates.vms.set('a/vm1', vm('a', 'vm1', 'Always'));
      vmStates.vms.set('a/booting', vm('a', 'booting', 'Always'));
      vmStates.vms.set('a/off', vm('a', 'off', 'Halted'));
      assert.equal((await put('a', 'vm1', 'migrate', '{}')).status, 202);
      assert.deepEqual(migrations, [{ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstanceMigration', metadata: { generateName: 'kubevirt-migrate-vm-', namespace: 'a' }, spec: { vmiName: 'vm1' } }]);
      const booting = await put('a', 'booting', 'migrate');
      assert.equal(booting.status, 409);
      assert.match(String(booting.json?.['message']), /VM is not running: phase Scheduled/);
      assert.equal((await put('a', 'off', 'migrate')).status, 404);
      assert.equal(migrations.length, 1);
    });
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
