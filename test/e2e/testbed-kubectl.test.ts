// Real kubectl against the testbed API server: VMIs against the CRD schema, apply, dry-run,
// printing, describe; and garbage collection of a VMI's launcher pod.
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { CoreV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { stringify } from 'yaml';
import { eventually } from '@podvirt/test-support';
import { http, kubectl, startTestApiServer, type TestApiServer } from './testbed-helpers.js';

const vmi = (name: string, domain: Record<string, unknown> = {}): Record<string, unknown> => ({
  apiVersion: 'kubevirt.io/v1',
  kind: 'VirtualMachineInstance',
  metadata: { name },
  spec: {
    domain: { resources: { requests: { memory: '128Mi' } }, devices: { disks: [{ name: 'root', disk: { bus: 'virtio' } }] }, ...domain },
    volumes: [{ name: 'root', containerDisk: { image: 'podvirt/guest:latest' } }],
  },
});

describe('testbed API server with kubectl', () => {
  let tb: TestApiServer;
  let run: (args: string[], input?: string) => ReturnType<typeof kubectl>;
  const manifest = async (name: string, obj: unknown): Promise<string> => {
    const path = join(tb.dir, `${name}.yaml`);
    await writeFile(path, stringify(obj));
    return path;
  };
  before(async () => {
    tb = await startTestApiServer();
    run = (args, input) => kubectl(tb.kubeconfigPath, args, input);
  });
  after(() => tb.close());

  test('kubectl api-resources shows short names and groups', async () => {
    const out = (await run(['api-resources'])).stdout;
    assert.match(out, /virtualmachineinstances\s+vmi,vmis\s+kubevirt\.io\/v1\s+true\s+VirtualMachineInstance/);
    assert.match(out, /pods\s+po\s+v1\s+true\s+Pod/);
    assert.match(out, /events\s+ev\s+events\.k8s\.io\/v1\s+true\s+Event/);
  });

  test('VMI schema errors name their fields, as kubectl prints them', async () => {
    const bad = vmi('bad', { cpu: { cores: 'x' }, firmware: { kernelBoot: { container: {} } } });
    (bad['spec'] as Record<string, unknown>)['volumes'] = [{ name: 'root', hostDisk: { path: '/x', type: 'Sideways' } }];
    const res = await run(['apply', '-f', await manifest('bad', bad)]);
    assert.equal(res.code, 1);
    assert.match(res.stderr, /The VirtualMachineInstance "bad" is invalid:/);
    assert.match(res.stderr, /spec\.domain\.cpu\.cores: Invalid value: "string": spec\.domain\.cpu\.cores in body must be of type integer: "string"/);
    assert.match(res.stderr, /spec\.domain\.firmware\.kernelBoot\.container\.image: Required value/);
    assert.match(res.stderr, /spec\.volumes\[0\]\.hostDisk\.type: Unsupported value: "Sideways": supported values: "Disk", "DiskOrCreate"/);
    const raw = await http(tb.server.url, 'POST', '/apis/kubevirt.io/v1/namespaces/default/virtualmachineinstances', vmi('raw', { memory: { guest: '12 8Mi' } }));
    assert.equal(raw.status, 422);
    const details = raw.body['details'] as { kind: string; group: string; causes: Array<{ field: string; reason: string }> };
    assert.deepEqual([details.kind, details.group], ['VirtualMachineInstance', 'kubevirt.io']);
    assert.deepEqual(details.causes.map((c) => [c.field, c.reason]), [['spec.domain.memory.guest', 'FieldValueInvalid']]);
  });

  test('VMI fields outside the schema are pruned, except where unknown fields are preserved', async () => {
    const obj = vmi('pruned', { somethingNew: { a: 1 } });
    (obj['spec'] as Record<string, unknown>)['volumes'] = [{ name: 'root', containerDisk: { image: 'img', bogus: true } }];
    obj['topLevelJunk'] = 1;
    const custom = tb.kubeConfig.makeApiClient(CustomObjectsApi);
    const created = (await custom.createNamespacedCustomObject({ group: 'kubevirt.io', version: 'v1', namespace: 'default', plural: 'virtualmachineinstances', body: obj })) as Record<string, Record<string, unknown>>;
    assert.equal(created['topLevelJunk'], undefined);
    assert.deepEqual((created['spec']?.['domain'] as Record<string, unknown>)['somethingNew'], { a: 1 });
    assert.deepEqual((created['spec']?.['volumes'] as Array<Record<string, unknown>>)[0]?.['containerDisk'], { image: 'img' });
    assert.equal(created['status'], undefined);
  });

  test('VMI status subresource, printer columns, -o wide/yaml/json and get all', async () => {
    assert.equal((await run(['apply', '-f', await manifest('shown', vmi('shown'))])).code, 0);
    const custom = tb.kubeConfig.makeApiClient(CustomObjectsApi);
    const status = { phase: 'Running', nodeName: 'node1', interfaces: [{ ipAddress: '10.0.2.15' }], conditions: [{ type: 'Ready', status: 'True' }, { type: 'LiveMigratable', status: 'False' }] };
    await custom.patchNamespacedCustomObjectStatus({ group: 'kubevirt.io', version: 'v1', namespace: 'default', plural: 'virtualmachineinstances', name: 'shown', body: { status, spec: { domain: { cpu: { cores: 9 } } } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
    const got = JSON.parse((await run(['get', 'vmi', 'shown', '-o', 'json'])).stdout) as { spec: { domain: { cpu?: unknown } }; status: { phase: string } };
    assert.equal(got.status.phase, 'Running');
    assert.equal(got.spec.domain.cpu, undefined, 'a status write ignores spec');
    const table = (await run(['get', 'vmis', 'shown'])).stdout;
    assert.match(table, /NAME\s+AGE\s+PHASE\s+IP\s+NODENAME\s+READY\n/);
    assert.match(table, /shown\s+\d+s\s+Running\s+10\.0\.2\.15\s+node1\s+True\n/);
    assert.match((await run(['get', 'vmi', 'shown', '-o', 'wide'])).stdout, /LIVE-MIGRATABLE\s+PAUSED\n.*False/s);
    assert.match((await run(['get', 'vmi', 'shown', '-o', 'yaml'])).stdout, /kind: VirtualMachineInstance\n/);
    assert.match((await run(['get', 'all'])).stdout, /virtualmachineinstance\.kubevirt\.io\/shown/);
  });

  test('VirtualMachineInstanceMigration: short names, status subresource, printer columns Phase and VMI', async () => {
    const migration = { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstanceMigration', metadata: { name: 'move-shown' }, spec: { vmiName: 'shown' } };
    assert.match((await run(['apply', '-f', await manifest('move-shown', migration)])).stdout, /virtualmachineinstancemigration\.kubevirt\.io\/move-shown created/);
    const custom = tb.kubeConfig.makeApiClient(CustomObjectsApi);
    const body = { status: { phase: 'Scheduling', migrationState: { sourceNode: 'node1' } }, spec: { vmiName: 'other' } };
    await custom.patchNamespacedCustomObjectStatus({ group: 'kubevirt.io', version: 'v1', namespace: 'default', plural: 'virtualmachineinstancemigrations', name: 'move-shown', body }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
    const table = (await run(['get', 'vmim'])).stdout;
    assert.match(table, /^NAME\s+PHASE\s+VMI\n/);
    assert.match(table, /move-shown\s+Scheduling\s+shown\n/, 'a status write ignores spec');
    assert.match((await run(['get', 'vmims', 'move-shown', '-o', 'yaml'])).stdout, /sourceNode: node1/);
    assert.match((await run(['get', 'all'])).stdout, /virtualmachineinstancemigration\.kubevirt\.io\/move-shown/);
  });

  test('kubectl apply twice: the second is unchanged; a change is patched; --dry-run=server persists nothing', async () => {
    const path = await manifest('twice', vmi('twice'));
    assert.match((await run(['apply', '-f', path])).stdout, /virtualmachineinstance\.kubevirt\.io\/twice created/);
    const rv = tb.server.revision;
    assert.match((await run(['apply', '-f', path])).stdout, /virtualmachineinstance\.kubevirt\.io\/twice unchanged/);
    assert.equal(tb.server.revision, rv);
    const changed = vmi('twice', { cpu: { cores: 2 } });
    const dry = await run(['apply', '--dry-run=server', '-f', await manifest('twice-dry', changed)]);
    assert.match(dry.stdout, /configured \(server dry run\)/);
    assert.equal(tb.server.revision, rv);
    assert.match((await run(['apply', '-f', await manifest('twice2', changed)])).stdout, /twice configured/);
    const after2 = JSON.parse((await run(['get', 'vmi', 'twice', '-o', 'json'])).stdout) as { metadata: { generation: number; annotations: Record<string, string> }; spec: { domain: { cpu: { cores: number } } } };
    assert.equal(after2.spec.domain.cpu.cores, 2);
    assert.equal(after2.metadata.generation, 2);
    assert.ok(after2.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration']?.includes('"cores":2'));
  });

  test('pods: kubectl apply (strategic merge), describe, get events, delete', async () => {
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'busybox', command: ['sleep', '100'] }] } };
    assert.equal((await run(['apply', '-f', await manifest('web', pod)])).code, 0);
    assert.match((await run(['apply', '-f', await manifest('web', pod)])).stdout, /pod\/web unchanged/);
    pod.metadata.labels.app = 'web2';
    assert.match((await run(['apply', '-f', await manifest('web', pod)])).stdout, /pod\/web configured/);
    assert.match((await run(['get', 'pods', '--show-labels'])).stdout, /web\s+0\/1\s+Pending\s+0\s+\S+\s+app=web2/);
    const core = tb.kubeConfig.makeApiClient(CoreV1Api);
    const uid = (await core.readNamespacedPod({ namespace: 'default', name: 'web' })).metadata?.uid ?? '';
    await core.createNamespacedEvent({ namespace: 'default', body: {
      metadata: { name: 'web.1' }, involvedObject: { kind: 'Pod', namespace: 'default', name: 'web', uid }, reason: 'Tested', message: 'hello from the test', type: 'Normal',
      firstTimestamp: new Date(), lastTimestamp: new Date(), count: 1, source: { component: 'test' },
    } });
    const described = (await run(['describe', 'pod', 'web'])).stdout;
    assert.match(described, /Name:\s+web\n/);
    assert.match(described, /Normal\s+Tested\s+\S+\s+test\s+hello from the test/);
    assert.match((await run(['get', 'events'])).stdout, /Normal\s+Tested\s+pod\/web\s+hello from the test/);
    assert.match((await run(['get', 'events.v1.events.k8s.io', '-o', 'jsonpath={.items[0].note}'])).stdout, /hello from the test/);
    assert.match((await run(['delete', 'pod', 'web'])).stdout, /pod "web" deleted/);
    assert.equal((await run(['get', 'pod', 'web'])).code, 1);
  });

  test('a launcher pod owned by a VMI is garbage-collected with it', async () => {
    const custom = tb.kubeConfig.makeApiClient(CustomObjectsApi);
    const owner = (await custom.createNamespacedCustomObject({ group: 'kubevirt.io', version: 'v1', namespace: 'default', plural: 'virtualmachineinstances', body: vmi('owned') })) as { metadata: { uid: string } };
    const core = tb.kubeConfig.makeApiClient(CoreV1Api);
    await core.createNamespacedPod({ namespace: 'default', body: {
      metadata: { name: 'virt-launcher-owned-abcde', ownerReferences: [{ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', name: 'owned', uid: owner.metadata.uid, controller: true, blockOwnerDeletion: true }] },
      spec: { containers: [{ name: 'compute', image: 'podvirt/launcher:latest' }] },
    } });
    assert.equal((await run(['delete', 'vmi', 'owned'])).code, 0);
    await eventually(async () => ((await run(['get', 'pod', 'virt-launcher-owned-abcde'])).code === 1 ? true : undefined), { what: 'launcher pod collected', deadlineMs: 10_000 });
  });
});
