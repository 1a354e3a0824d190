import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, stat, unlink, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mock, test, type TestContext } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { deviceplugin } from '@podvirt/proto';
import { eventually } from '@podvirt/test-support';
import { DevicePlugins } from '../src/device-plugins/device-plugins.js';
import type { KubeletRegistrar, RegistrationRequest } from '../src/device-plugins/kubelet-registration.js';
import { quietLog } from './fixtures.js';

/** Records every Register call; fails while `failing` is set. */
class FakeRegistrar implements KubeletRegistrar {
  readonly calls: RegistrationRequest[] = [];
  failing = false;
  #waiters: (() => void)[] = [];

  register(request: RegistrationRequest): Promise<void> {
    this.calls.push(request);
    for (const w of this.#waiters.splice(0)) w();
    return this.failing ? Promise.reject(new Error('connect ENOENT kubelet.sock')) : Promise.resolve();
  }

  /** Resolves once `n` calls have been made; rejects after the deadline (AbortSignal.timeout is not faked by mock.timers). */
  async called(n: number, deadlineMs = 5_000): Promise<void> {
    const deadline = AbortSignal.timeout(deadlineMs);
    while (this.calls.length < n) {
      await new Promise<void>((resolve, reject) => {
        const fail = (): void => reject(new Error(`${n} Register calls not made within ${deadlineMs} ms (${this.calls.length} made)`));
        if (deadline.aborted) fail();
        deadline.addEventListener('abort', fail, { once: true });
        this.#waiters.push(() => {
          deadline.removeEventListener('abort', fail);
          resolve();
        });
      });
    }
  }
}

async function fakeNode(t: TestContext, devices: readonly string[]): Promise<{ root: string; dir: string }> {
  const base = await mkdtemp(join(tmpdir(), 'pvh-dp-'));
  t.after(() => rm(base, { recursive: true, force: true }));
  const root = join(base, 'host');
  const dir = join(base, 'device-plugins');
  await mkdir(join(root, 'dev', 'net'), { recursive: true });
  // Plain files stand in for the device nodes: the plugins look at presence only.
  for (const d of devices) await writeFile(join(root, d), '');
  return { root, dir };
}

function client(t: TestContext, dir: string, name: string): deviceplugin.DevicePluginClient {
  const c = new deviceplugin.DevicePluginClient(`unix:${join(dir, `podvirt-${name}.sock`)}`, grpc.credentials.createInsecure());
  t.after(() => c.close());
  return c;
}

/** Every ListAndWatch message, as `<count> <health…>` summaries. */
function watchList(t: TestContext, c: deviceplugin.DevicePluginClient): string[] {
  const seen: string[] = [];
  const call = c.listAndWatch({});
  call.on('data', (r: deviceplugin.ListAndWatchResponse) => seen.push(`${r.devices.length} ${[...new Set(r.devices.map((d) => d.health))].join(',')}`.trim()));
  call.on('error', () => undefined);
  t.after(() => call.cancel());
  return seen;
}

function allocate(c: deviceplugin.DevicePluginClient, ids: string[][]): Promise<deviceplugin.AllocateResponse> {
  return new Promise((resolve, reject) =>
    c.allocate({ containerRequests: ids.map((devicesIds) => ({ devicesIds })) }, (err, res) => (err ? reject(err) : resolve(res))));
}

async function start(t: TestContext, opts: { root: string; dir: string; registrar: KubeletRegistrar; count?: number; backoffMs?: number[] }): Promise<DevicePlugins> {
  const plugins = new DevicePlugins({
    dir: opts.dir, deviceRoot: opts.root, devicesPerPlugin: opts.count ?? 5, registrar: opts.registrar, log: quietLog(),
    ...(opts.backoffMs === undefined ? {} : { backoffMs: opts.backoffMs }),
  });
  t.after(() => plugins.close());
  await plugins.start();
  return plugins;
}

test('one plugin per present device node, each on its own socket, registered with its resource name', async (t) => {
  const node = await fakeNode(t, ['dev/kvm', 'dev/net/tun']);
  const registrar = new FakeRegistrar();
  const plugins = await start(t, { ...node, registrar });
  await registrar.called(2);
  assert.deepEqual(registrar.calls.map((c) => [c.resourceName, c.endpoint]).sort(), [
    ['devices.kubevirt.io/kvm', 'podvirt-kvm.sock'],
    ['devices.kubevirt.io/tun', 'podvirt-tun.sock'],
  ]);
  await eventually(() => plugins.registered, { what: 'registered' });
  assert.deepEqual(plugins.resources.sort(), ['devices.kubevirt.io/kvm', 'devices.kubevirt.io/tun']);
  assert.ok((await stat(join(node.dir, 'podvirt-kvm.sock'))).isSocket());
  await assert.rejects(stat(join(node.dir, 'podvirt-vhost-net.sock')), { code: 'ENOENT' });
});

test('ListAndWatch: N healthy IDs, unhealthy when the node disappears, healthy when it returns; empty list at close', async (t) => {
  const node = await fakeNode(t, ['dev/kvm']);
  const plugins = await start(t, { ...node, registrar: new FakeRegistrar(), count: 7 });
  const seen = watchList(t, client(t, node.dir, 'kvm'));
  await eventually(() => seen.length === 1, { what: 'first list' });
  assert.deepEqual(seen, ['7 Healthy']);
  await unlink(join(node.root, 'dev/kvm'));
  await eventually(() => seen.length === 2, { what: 'unhealthy list' });
  await writeFile(join(node.root, 'dev/kvm'), '');
  await eventually(() => seen.length === 3, { what: 'healthy list' });
  assert.deepEqual(seen, ['7 Healthy', '7 Unhealthy', '7 Healthy']);
  await plugins.close();
  await eventually(() => seen.length === 4, { what: 'empty list' });
  assert.equal(seen[3], '0');
  await assert.rejects(stat(join(node.dir, 'podvirt-kvm.sock')), { code: 'ENOENT' }, 'close removes the socket');
});

test('Allocate: one DeviceSpec (host path, container path, rw) per container and nothing else; unknown IDs are INVALID_ARGUMENT', async (t) => {
  const node = await fakeNode(t, ['dev/net/tun']);
  await start(t, { ...node, registrar: new FakeRegistrar() });
  const c = client(t, node.dir, 'tun');
  const res = await allocate(c, [['tun0'], ['tun3', 'tun4']]);
  const only = { envs: {}, mounts: [], annotations: {}, cdiDevices: [], devices: [{ hostPath: '/dev/net/tun', containerPath: '/dev/net/tun', permissions: 'rw' }] };
  assert.deepEqual(res.containerResponses, [only, only]);
  await assert.rejects(allocate(c, [['tun0', 'kvm1']]), (err: grpc.ServiceError) =>
    err.code === grpc.status.INVALID_ARGUMENT && err.details.includes('container_requests[0].devices_ids[1]') && err.details.includes('"kvm1"'));
});

test('a device node that appears after start gets its plugin then', async (t) => {
  const node = await fakeNode(t, []);
  const registrar = new FakeRegistrar();
  const plugins = await start(t, { ...node, registrar });
  assert.deepEqual(plugins.resources, []);
  assert.equal(plugins.registered, true, 'nothing to register');
  await writeFile(join(node.root, 'dev/vhost-net'), '');
  await registrar.called(1);
  assert.equal(registrar.calls[0]?.resourceName, 'devices.kubevirt.io/vhost-net');
});

test('registration socket missing: retried with backoff (1 s, 2 s, then the last step), not registered meanwhile', async (t) => {
  const node = await fakeNode(t, ['dev/kvm']);
  const registrar = new FakeRegistrar();
  registrar.failing = true;
  mock.timers.enable({ apis: ['setTimeout'] });
  t.after(() => mock.timers.reset());
  const plugins = await start(t, { ...node, registrar, backoffMs: [1_000, 2_000] });
  await registrar.called(1);
  assert.equal(plugins.registered, false);
  mock.timers.tick(999);
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(registrar.calls.length, 1);
  mock.timers.tick(1);
  await registrar.called(2);
  mock.timers.tick(1_999);
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(registrar.calls.length, 2);
  registrar.failing = false;
  mock.timers.tick(1);
  await registrar.called(3);
  await eventually(() => plugins.registered, { what: 'registered' });
  mock.timers.tick(60_000);
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(registrar.calls.length, 3, 'no more calls once registered');
});

test('kubelet restart: a new kubelet.sock re-registers every plugin; a removed plugin socket is served and registered again', async (t) => {
  const node = await fakeNode(t, ['dev/kvm', 'dev/net/tun']);
  const registrar = new FakeRegistrar();
  await start(t, { ...node, registrar });
  await registrar.called(2);
  const kubelet = createServer();
  await new Promise<void>((resolve) => kubelet.listen(join(node.dir, 'kubelet.sock'), resolve));
  t.after(() => new Promise((resolve) => kubelet.close(resolve)));
  await registrar.called(4);
  assert.deepEqual(registrar.calls.slice(2).map((c) => c.resourceName).sort(), ['devices.kubevirt.io/kvm', 'devices.kubevirt.io/tun']);

  await unlink(join(node.dir, 'podvirt-kvm.sock'));
  await registrar.called(5);
  assert.equal(registrar.calls[4]?.resourceName, 'devices.kubevirt.io/kvm');
  const seen = watchList(t, client(t, node.dir, 'kvm'));
  await eventually(() => seen.length === 1, { what: 'list from the new socket' });
  assert.deepEqual(seen, ['5 Healthy']);
});

test('a device whose directory does not exist yet (/dev/net) is watched from its ancestor and gets its plugin when it appears', async (t) => {
  const node = await fakeNode(t, ['dev/kvm']);
  await rm(join(node.root, 'dev/net'), { recursive: true });
  const registrar = new FakeRegistrar();
  const plugins = await start(t, { ...node, registrar });
  await registrar.called(1);
  await mkdir(join(node.root, 'dev/net'));
  await writeFile(join(node.root, 'dev/net/tun'), '');
  await registrar.called(2);
  assert.deepEqual(plugins.resources.sort(), ['devices.kubevirt.io/kvm', 'devices.kubevirt.io/tun']);
});
