// Device plugins end to end on the testbed: podvirt-handler's kvm, tun and vhost-net plugins
// register with the testbed kubelet, the Node shows them in capacity and allocatable, a pod that
// requests them sees exactly the allocated device nodes, one asking for more than there are stays
// Pending, and a VMI's launcher pod gets what the controller asked for while its VM runs.
// The device nodes are real character devices (mknod with the host devices' numbers) in a
// fake host root, so removing one never touches the machine's /dev.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, stat, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, test } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import type { V1Pod } from '@kubernetes/client-node';
import { repoRoot } from '../testbed/index.js';
import { guestVmi, NS, VmiSuite } from './vmi-stack.js';

const run = promisify(execFile);
const DEVICES = [
  { name: 'kvm', path: 'dev/kvm', major: 10, minor: 232 },
  { name: 'tun', path: 'dev/net/tun', major: 10, minor: 200 },
  { name: 'vhost-net', path: 'dev/vhost-net', major: 10, minor: 238 },
];
const RESOURCES = DEVICES.map((d) => `devices.kubevirt.io/${d.name}`);

async function mknod(root: string, d: (typeof DEVICES)[number]): Promise<void> {
  await mkdir(join(root, d.path, '..'), { recursive: true });
  await run('mknod', ['-m', '600', join(root, d.path), 'c', String(d.major), String(d.minor)]);
}

/** A client written only against the published v1beta1 .proto (proto-loader), not podvirt's generated code. */
function externalPluginClient(socket: string): grpc.Client & Record<string, (...args: unknown[]) => unknown> {
  const def = protoLoader.loadSync(join(repoRoot(import.meta.url), 'proto/deviceplugin/v1beta1/api.proto'), { keepCase: true, defaults: true });
  const pkg = grpc.loadPackageDefinition(def) as unknown as { v1beta1: { DevicePlugin: grpc.ServiceClientConstructor } };
  return new pkg.v1beta1.DevicePlugin(`unix:${socket}`, grpc.credentials.createInsecure()) as unknown as grpc.Client & Record<string, (...args: unknown[]) => unknown>;
}

function unary<T>(client: Record<string, (...args: unknown[]) => unknown>, method: string, request: unknown): Promise<T> {
  return new Promise((resolve, reject) => {
    client[method]?.(request, (err: Error | null, res: T) => (err ? reject(err) : resolve(res)));
  });
}

describe('device plugins: handler ↔ kubelet ↔ pods', () => {
  let root = '';
  let handlerStartedAt = 0;
  const suite = VmiSuite.setUp({
    before: async () => {
      root = await mkdtemp(join(tmpdir(), 'pv-devroot-'));
      for (const d of DEVICES) await mknod(root, d);
      return {
        deviceRoot: root,
        onLogLine: (component, line) => {
          if (component === 'handler' && handlerStartedAt === 0 && line.includes('"starting"')) handlerStartedAt = Date.now();
        },
      };
    },
    after: async () => {
      if (root !== '') await rm(root, { recursive: true, force: true });
    },
  });
  const pluginsDir = (): string => join(suite.stack.testbed.kubeletRoot, 'device-plugins');
  const allocatable = async (): Promise<Record<string, string>> => {
    const out = await suite.kubectl(['get', 'node', suite.stack.nodeName, '-o', 'jsonpath={.status.allocatable}']);
    return JSON.parse(out.stdout || '{}') as Record<string, string>;
  };
  const pod = (name: string, resources: Record<string, string>, script: string): Record<string, unknown> => ({
    apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: NS },
    spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'busybox', command: ['sh', '-c', script], resources: { requests: resources, limits: resources } }] },
  });
  const containerPid = (p: V1Pod | undefined, container: string): number =>
    Number(/testbed:\/\/(\d+)/.exec(p?.status?.containerStatuses?.find((c) => c.name === container)?.containerID ?? '')?.[1] ?? 0);
  /** Which plugin device nodes a container's own /dev holds (read through its root). */
  const nodesIn = async (pid: number): Promise<string[]> => {
    const found = await Promise.all(DEVICES.map((d) => stat(`/proc/${pid}/root/${d.path}`).then((s) => (s.isCharacterDevice() ? `/${d.path}` : undefined), () => undefined)));
    return found.filter((p): p is string => p !== undefined);
  };


  test('the Node shows the three resources (capacity and allocatable 1000 each); kubectl describe node lists them', async () => {
    let window = '';
    const seen = await suite.eventually('three device resources allocatable', async () => {
      const from = Date.now() - handlerStartedAt;
      const a = await allocatable();
      window = `${from}–${Date.now() - handlerStartedAt}`;
      return RESOURCES.every((r) => a[r] === '1000') ? a : undefined;
    }, 30_000);
    console.log(`# allocatable shows ${RESOURCES.join(', ')}: the first kubectl get node that saw them ran ${window} ms after the handler logged "starting"`);
    assert.equal(seen['devices.kubevirt.io/kvm'], '1000');
    const describe = await suite.kubectl(['describe', 'node', suite.stack.nodeName]);
    // kubectl prints the quantity 1000 as 1k, as on any node with KubeVirt's plugins.
    for (const r of RESOURCES) assert.match(describe.stdout, new RegExp(`${r.replace(/[./]/g, '\\$&')}:\\s+1k`), `describe node shows ${r}`);
    assert.deepEqual((await readdir(pluginsDir())).sort(), ['kubelet.sock', 'podvirt-kvm.sock', 'podvirt-tun.sock', 'podvirt-vhost-net.sock']);
  });

  test('a client written against the published v1beta1 API: options, ListAndWatch, Allocate', async () => {
    const client = externalPluginClient(join(pluginsDir(), 'podvirt-kvm.sock'));
    try {
      const options = await unary<Record<string, unknown>>(client, 'GetDevicePluginOptions', {});
      assert.deepEqual(options, { pre_start_required: false, get_preferred_allocation_available: false });
      const first = await new Promise<{ devices: { ID: string; health: string }[] }>((resolve, reject) => {
        const call = (client['ListAndWatch'] as (r: unknown) => grpc.ClientReadableStream<{ devices: { ID: string; health: string }[] }>)({});
        call.once('data', (msg) => {
          resolve(msg);
          call.cancel();
        });
        call.on('error', (err: grpc.ServiceError) => {
          if (err.code !== grpc.status.CANCELLED) reject(err);
        });
      });
      assert.equal(first.devices.length, 1000);
      assert.ok(first.devices.every((d) => d.health === 'Healthy'));
      assert.equal(new Set(first.devices.map((d) => d.ID)).size, 1000, 'IDs are unique');
      const res = await unary<{ container_responses: { devices: unknown[]; envs: object; mounts: unknown[] }[] }>(client, 'Allocate', { container_requests: [{ devices_ids: ['kvm7'] }] });
      assert.deepEqual(res.container_responses.map((c) => c.devices), [[{ container_path: '/dev/kvm', host_path: '/dev/kvm', permissions: 'rw' }]]);
      assert.deepEqual(res.container_responses[0]?.envs, {});
      assert.deepEqual(res.container_responses[0]?.mounts, []);
    } finally {
      client.close();
    }
  });

  test('a container gets exactly the device nodes it requested; describe node counts the allocations', async () => {
    await suite.apply(
      pod('dev-all', Object.fromEntries(RESOURCES.map((r) => [r, '1'])), 'sleep 600'),
      pod('dev-tun', { 'devices.kubevirt.io/tun': '1' }, 'sleep 600'),
      pod('dev-none', {}, 'sleep 600'),
    );
    const running = async (name: string): Promise<number> => suite.eventually(`${name} running`, async () => {
      const p = (await suite.core.readNamespacedPod({ name, namespace: NS })) as V1Pod;
      return containerPid(p, 'main') || undefined;
    });
    assert.deepEqual(await nodesIn(await running('dev-all')), ['/dev/kvm', '/dev/net/tun', '/dev/vhost-net']);
    assert.deepEqual(await nodesIn(await running('dev-tun')), ['/dev/net/tun']);
    await running('dev-none');
    const describe = await suite.kubectl(['describe', 'node', suite.stack.nodeName]);
    const allocated = describe.stdout.slice(describe.stdout.indexOf('Allocated resources:'));
    assert.match(allocated, /devices\.kubevirt\.io\/kvm\s+1\s+1/);
    assert.match(allocated, /devices\.kubevirt\.io\/tun\s+2\s+2/);
    await suite.kubectl(['delete', 'pod', 'dev-all', 'dev-tun', 'dev-none', '--wait=false']);
  });

  test('more devices than advertised: Pending with FailedScheduling naming the resource', async () => {
    await suite.apply(pod('dev-too-many', { 'devices.kubevirt.io/kvm': '1001' }, 'true'));
    const event = await suite.eventually('FailedScheduling', async () =>
      (await suite.core.listNamespacedEvent({ namespace: NS })).items.find((e) => e.involvedObject.name === 'dev-too-many' && e.reason === 'FailedScheduling'));
    assert.match(event.message ?? '', /Insufficient devices\.kubevirt\.io\/kvm/);
    const p = (await suite.core.readNamespacedPod({ name: 'dev-too-many', namespace: NS })) as V1Pod;
    assert.equal(p.status?.phase, 'Pending');
    assert.equal(p.spec?.nodeName, undefined);
    const condition = p.status?.conditions?.find((c) => c.type === 'PodScheduled');
    assert.equal(condition?.reason, 'Unschedulable');
    assert.match(condition?.message ?? '', /Insufficient devices\.kubevirt\.io\/kvm/);
    await suite.kubectl(['delete', 'pod', 'dev-too-many', '--wait=false']);
  });

  test('a VMI with a masquerade NIC: the launcher pod requests tun (emulation allowed), the compute container has only /dev/net/tun, the VM runs; a device node removed meanwhile is unhealthy and the VM keeps running', async () => {
    const vmi = guestVmi(suite.guest, 'devvm', { devices: { interfaces: [{ name: 'default', masquerade: {} }] } });
    (vmi['spec'] as Record<string, unknown>)['networks'] = [{ name: 'default', pod: {} }];
    await suite.apply(vmi);
    const running = await suite.waitForPhase('devvm', 'Running');
    const launcher = (await suite.podsOf(running))[0];
    const compute = launcher?.spec?.containers.find((c) => c.name === 'compute');
    assert.deepEqual(compute?.resources?.requests?.['devices.kubevirt.io/tun'], '1');
    assert.deepEqual(compute?.resources?.limits?.['devices.kubevirt.io/tun'], '1');
    assert.equal(compute?.resources?.requests?.['devices.kubevirt.io/kvm'], undefined, 'emulation allowed: no kvm, as KubeVirt');
    const current = (await suite.core.readNamespacedPod({ name: launcher?.metadata?.name ?? '', namespace: NS })) as V1Pod;
    assert.deepEqual(await nodesIn(containerPid(current, 'compute')), ['/dev/net/tun']);
    await suite.waitForGuestReady(running);
    const logs = await suite.kubectl(['logs', launcher?.metadata?.name ?? '', '-c', 'compute']);
    const probed = logs.stdout.split('\n').find((l) => l.includes('"hypervisor probed"'));
    assert.match(probed ?? '', /"devices":\["\/dev\/net\/tun"\]/, 'the launcher logs the device nodes it was given');

    await unlink(join(root, 'dev/kvm'));
    await suite.eventually('kvm unhealthy', async () => ((await allocatable())['devices.kubevirt.io/kvm'] === '0' ? true : undefined));
    const capacity = await suite.kubectl(['get', 'node', suite.stack.nodeName, '-o', 'jsonpath={.status.capacity.devices\\.kubevirt\\.io/kvm}']);
    assert.equal(capacity.stdout, '1000', 'capacity stays');
    assert.equal((await suite.vmi('devvm'))?.status?.phase, 'Running');
    assert.ok((await suite.qemuPids('devvm')).length > 0, 'qemu still runs');
    await mknod(root, DEVICES[0] ?? DEVICES[1]!);
    await suite.eventually('kvm healthy again', async () => ((await allocatable())['devices.kubevirt.io/kvm'] === '1000' ? true : undefined));
    await suite.kubectl(['delete', 'vmi', 'devvm', '--wait=false']);
    await suite.waitForGone('devvm');
  });

  test('a removed plugin socket is served and registered again; SIGTERM removes the sockets; a new handler registers again', async () => {
    const tunSocket = join(pluginsDir(), 'podvirt-tun.sock');
    await unlink(tunSocket);
    // tmpfs may hand the new socket the freed inode number, so existence is what tells.
    await suite.eventually('tun socket re-created', async () => (await stat(tunSocket).catch(() => undefined))?.isSocket());
    await suite.eventually('tun allocatable again', async () => ((await allocatable())['devices.kubevirt.io/tun'] === '1000' ? true : undefined));

    const exit = await suite.stack.handler.stop();
    assert.equal(exit.code, 0);
    assert.deepEqual(await readdir(pluginsDir()), ['kubelet.sock'], 'the handler removed its plugin sockets');
    await suite.stack.restartHandler();
    await suite.eventually('plugins registered again', async () => {
      const names = await readdir(pluginsDir());
      return names.length === 4 ? names : undefined;
    });
    await suite.eventually('allocatable after the restart', async () => {
      const a = await allocatable();
      return RESOURCES.every((r) => a[r] === '1000') ? true : undefined;
    });
  });
});
