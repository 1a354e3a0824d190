// The whole handler runtime with fakes: start order (unschedulable → ready → schedulable),
// /readyz and /metrics on their ports, the node API on its socket, and a graceful close that
// leaves the launcher running and the node unschedulable.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { deviceplugin, shutdownGrpcServer } from '@podvirt/proto';
import { NODE_SCHEDULABLE_LABEL } from '@podvirt/api';
import { HandlerRuntime } from '../src/handler-runtime.js';
import { DEFAULT_MIGRATION_SETTINGS } from '../src/live-migration/migration-settings.js';
import type { NodeMetadataPatch, NodePatcher } from '../src/heartbeat/node-patcher.js';
import { eventually } from '@podvirt/test-support';
import { FakeEvents, FakeKube } from './fake-kube.js';
import { FakeLauncher } from './fake-launcher.js';
import { makeVmi, NODE, quietLog } from './fixtures.js';

class RecordingPatcher implements NodePatcher {
  readonly schedulable: string[] = [];
  patchMetadata(_node: string, patch: NodeMetadataPatch): Promise<void> {
    const value = patch.labels?.[NODE_SCHEDULABLE_LABEL];
    if (value !== undefined) this.schedulable.push(value);
    return Promise.resolve();
  }
}

test('start → ready and schedulable; close → not ready, unschedulable, launcher untouched', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'pvh-rt-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const launcher = await FakeLauncher.start({ podsDir: dir, podUid: 'p1' });
  t.after(() => launcher.close());
  const kube = new FakeKube();
  kube.create(makeVmi());
  const patcher = new RecordingPatcher();
  const runtime = new HandlerRuntime({
    args: {
      nodeName: NODE, podsDir: dir, workers: 2, watchdogMs: 30_000, resyncPeriodMs: 60_000,
      ghostRecordDir: join(dir, 'records'), nodeApiSocket: join(dir, 'api', 'node.sock'), nodeApiTls: undefined,
      httpAddress: '127.0.0.1', metricsPort: 0, healthPort: 0, metricsScrapeTimeoutMs: 3_000, ioErrorRetryIntervalMs: 10_000, heartbeatIntervalMs: 60_000, shutdownGraceMs: 2_000,
      devicePlugins: undefined,
      migration: DEFAULT_MIGRATION_SETTINGS,
      migrationProxy: undefined,
    },
    vmiApi: kube, eventApi: new FakeEvents(), nodePatcher: patcher, log: quietLog(),
  });
  t.after(() => runtime.close());
  const ac = new AbortController();
  t.after(() => ac.abort());
  assert.equal(await runtime.start(ac.signal), true);
  assert.deepEqual(patcher.schedulable, ['false', 'true']);
  const [metricsPort, healthPort] = runtime.httpPorts;
  const get = async (port: number | undefined, path: string) => {
    const res = await fetch(`http://127.0.0.1:${port}${path}`);
    return { status: res.status, body: await res.text() };
  };
  assert.equal((await get(healthPort, '/readyz')).status, 200);
  assert.equal((await get(metricsPort, '/readyz')).status, 404, 'separate ports keep separate routes');
  await eventually(() => kube.current('default/vm1')?.status?.phase === 'Running');
  const metrics = await get(metricsPort, '/metrics');
  assert.match(metrics.body, /kubevirt_vmi_phase_count\{node="node01",phase="running",[^}]*\} 1/);
  assert.match(metrics.body, /podvirt_handler_launcher_call_duration_seconds_count\{method="Sync",code="OK"\} \d+/);
  assert.ok((await stat(join(dir, 'records', 'uid-1'))).isFile());
  assert.ok((await stat(join(dir, 'api', 'node.sock'))).isSocket());

  await runtime.close();
  assert.deepEqual(patcher.schedulable, ['false', 'true', 'false']);
  assert.equal(launcher.domain?.state, 'Running', 'the VM keeps running');
  await eventually(() => launcher.openStreams === 0);
  await assert.rejects(stat(join(dir, 'api', 'node.sock')), { code: 'ENOENT' });
  assert.ok((await stat(join(dir, 'records', 'uid-1'))).isFile(), 'the record stays for the next handler');
  await assert.rejects(fetch(`http://127.0.0.1:${healthPort}/healthz`));
});

test('device plugins: /readyz names them until the kubelet.sock that was missing at start appears and takes their registration', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'pvh-rt-dp-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  await mkdir(join(dir, 'host', 'dev'), { recursive: true });
  await writeFile(join(dir, 'host', 'dev', 'kvm'), '');
  const pluginsDir = join(dir, 'dp');
  const runtime = new HandlerRuntime({
    args: {
      nodeName: NODE, podsDir: dir, workers: 1, watchdogMs: 30_000, resyncPeriodMs: 60_000,
      ghostRecordDir: join(dir, 'records'), nodeApiSocket: join(dir, 'api', 'node.sock'), nodeApiTls: undefined,
      httpAddress: '127.0.0.1', metricsPort: 0, healthPort: 0, metricsScrapeTimeoutMs: 3_000, ioErrorRetryIntervalMs: 10_000, heartbeatIntervalMs: 60_000, shutdownGraceMs: 2_000,
      devicePlugins: { dir: pluginsDir, deviceRoot: join(dir, 'host'), maxDevices: 3 },
      migration: DEFAULT_MIGRATION_SETTINGS,
      migrationProxy: undefined,
    },
    vmiApi: new FakeKube(), eventApi: new FakeEvents(), nodePatcher: new RecordingPatcher(), log: quietLog(),
  });
  t.after(() => runtime.close());
  const ac = new AbortController();
  t.after(() => ac.abort());
  assert.equal(await runtime.start(ac.signal), true);
  const readyz = async (): Promise<{ status: number; body: string }> => {
    const res = await fetch(`http://127.0.0.1:${runtime.httpPorts[1]}/readyz`);
    return { status: res.status, body: await res.text() };
  };
  assert.deepEqual(await readyz(), { status: 503, body: 'not ready: device-plugins-registered\n' });

  // A kubelet's Registration service appears (the handler's watch sees the socket, no backoff wait).
  const registered: deviceplugin.RegisterRequest[] = [];
  const kubelet = new grpc.Server();
  kubelet.addService(deviceplugin.RegistrationService, {
    register: (call: grpc.ServerUnaryCall<deviceplugin.RegisterRequest, deviceplugin.Empty>, cb: grpc.sendUnaryData<deviceplugin.Empty>) => {
      registered.push(call.request);
      cb(null, {});
    },
  } satisfies deviceplugin.RegistrationServer);
  await new Promise<void>((resolve, reject) => kubelet.bindAsync(`unix:${join(pluginsDir, 'kubelet.sock')}`, grpc.ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve())));
  t.after(() => shutdownGrpcServer(kubelet, 500));
  await eventually(async () => (await readyz()).status === 200, { what: '/readyz 200', deadlineMs: 15_000 });
  assert.deepEqual(registered.map((r) => [r.version, r.endpoint, r.resourceName]), [['v1beta1', 'podvirt-kvm.sock', 'devices.kubevirt.io/kvm']]);
  assert.ok((await stat(join(pluginsDir, 'podvirt-kvm.sock'))).isSocket());
  await runtime.close();
  await assert.rejects(stat(join(pluginsDir, 'podvirt-kvm.sock')), { code: 'ENOENT' }, 'close removes the plugin socket');
});
