// The testbed kubelet's pod sandboxes: a network namespace per pod with an address from
// Debian's real CNI plugins (bridge + host-local + loopback), torn down when the pod ends.
import assert from 'node:assert/strict';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { CoreV1Api, KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { eventually } from '@podvirt/test-support';
import { startTestbed, type Testbed } from '../testbed/cli/index.js';
import { readTcp } from '../testbed/sandbox/read-tcp.js';
import { runCommand } from '../testbed/sandbox/run-command.js';
import { stackNetwork, type StackNetwork } from '../testbed/sandbox/stack-network.js';
import { kubectl } from './testbed-helpers.js';

async function leftoverNetns(net: StackNetwork): Promise<string[]> {
  return (await readdir('/run/netns').catch(() => [] as string[])).filter((n) => n.startsWith(net.netnsPrefix));
}

async function ipamAllocations(net: StackNetwork): Promise<string[]> {
  const files = await readdir(join(net.ipamDir, net.networkName)).catch(() => [] as string[]);
  return files.filter((f) => /^\d+\.\d+\.\d+\.\d+$/.test(f));
}

describe('testbed pod network (real CNI)', () => {
  let tb: Testbed;
  let core: CoreV1Api;
  let net: StackNetwork;
  before(async () => {
    tb = await startTestbed({ stateDir: await mkdtemp(join(tmpdir(), 'podvirt-testbed-net-')) });
    const kc = new KubeConfig();
    kc.loadFromFile(tb.kubeconfigPath);
    core = kc.makeApiClient(CoreV1Api);
    net = stackNetwork(tb.kubeletRoot);
  });
  after(async () => {
    await tb.close();
    assert.deepEqual(await leftoverNetns(net), [], 'no network namespace is left');
    assert.equal((await runCommand(['ip', 'link', 'show', net.bridge])).code, 1, 'the bridge is gone');
  });

  const pod = (name: string): Promise<V1Pod> => core.readNamespacedPod({ namespace: 'default', name });
  const running = (name: string): Promise<V1Pod> =>
    eventually(async () => ((await pod(name)).status?.phase === 'Running' ? pod(name) : undefined), { what: `${name} running`, deadlineMs: 20_000 });
  const server = (name: string): V1Pod => ({
    metadata: { name },
    spec: {
      restartPolicy: 'Never',
      terminationGracePeriodSeconds: 1,
      containers: [{ name: 'main', image: 'busybox', command: ['sh', '-c', `while true; do echo "hello from ${name}" | busybox nc -l -p 8080; done`] }],
    },
  });

  test('each pod gets its own address; the host and other pods reach it; deletion releases it', async () => {
    await core.createNamespacedPod({ namespace: 'default', body: server('net-a') });
    await core.createNamespacedPod({ namespace: 'default', body: server('net-b') });
    const [a, b] = [await running('net-a'), await running('net-b')];
    const ipA = a.status?.podIP ?? '';
    const ipB = b.status?.podIP ?? '';
    assert.match(ipA, /^10\.(20[0-7])\.\d+\.\d+$/);
    assert.notEqual(ipA, ipB);
    assert.deepEqual(a.status?.podIPs?.map((p) => p.ip), [ipA]);
    assert.equal(a.status?.conditions?.find((c) => c.type === 'PodReadyToStartContainers')?.status, 'True');
    const wide = await kubectl(tb.kubeconfigPath, ['get', 'pods', 'net-a', '-o', 'wide']);
    assert.match(wide.stdout, new RegExp(`net-a\\s+1/1\\s+Running\\s+0\\s+\\S+\\s+${ipA.replaceAll('.', '\\.')}\\s`));
    assert.equal(await eventually(() => readTcp(ipA, 8080).catch(() => undefined), { what: 'host → pod', deadlineMs: 10_000 }), 'hello from net-a\n');

    await core.createNamespacedPod({
      namespace: 'default',
      body: {
        metadata: { name: 'net-client' },
        spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'busybox', command: ['sh', '-c', `ip -o -4 addr show eth0; busybox nc ${ipB} 8080 </dev/null`] }] },
      },
    });
    const client = await eventually(async () => ((await pod('net-client')).status?.phase === 'Succeeded' ? pod('net-client') : undefined), { what: 'client done', deadlineMs: 20_000 });
    const logs = (await kubectl(tb.kubeconfigPath, ['logs', 'net-client'])).stdout;
    assert.match(logs, new RegExp(`eth0\\s+inet ${(client.status?.podIP ?? '').replaceAll('.', '\\.')}/24`), 'the container runs in its pod sandbox');
    assert.match(logs, /hello from net-b\n/);
    assert.equal((await ipamAllocations(net)).length, 3);

    for (const name of ['net-a', 'net-b', 'net-client']) await core.deleteNamespacedPod({ namespace: 'default', name });
    await eventually(async () => ((await core.listNamespacedPod({ namespace: 'default' })).items.length === 0 ? true : undefined), { what: 'pods gone', deadlineMs: 20_000 });
    assert.deepEqual(await leftoverNetns(net), []);
    assert.deepEqual(await ipamAllocations(net), [], "host-local's state dir holds no allocation");
  });

  test('a failing CNI plugin leaves the pod Pending with the error in its events and status; it starts once CNI works', async () => {
    const confFile = join(net.confDir, '10-podvirt.conflist');
    const good = await readFile(confFile, 'utf8');
    const bad = good.replace(/"subnet": "[^"]+"/, '"subnet": "10.300.0.0/24"');
    assert.notEqual(bad, good);
    await writeFile(confFile, bad);
    try {
      await core.createNamespacedPod({ namespace: 'default', body: server('net-bad') });
      const event = await eventually(async () => {
        const list = await core.listNamespacedEvent({ namespace: 'default', fieldSelector: 'involvedObject.name=net-bad,reason=FailedCreatePodSandBox' });
        return list.items[0];
      }, { what: 'FailedCreatePodSandBox', deadlineMs: 20_000 });
      assert.equal(event.type, 'Warning');
      assert.match(event.message ?? '', /^Failed to create pod sandbox: plugin type="bridge" failed \(add\): .*10\.300\.0\.0\/24/);
      const pending = await eventually(async () => {
        const p = await pod('net-bad');
        return p.status?.conditions?.find((c) => c.type === 'PodReadyToStartContainers')?.message !== undefined ? p : undefined;
      }, { what: 'status shows the error', deadlineMs: 10_000 });
      assert.equal(pending.status?.phase, 'Pending');
      assert.equal(pending.status?.podIP, undefined);
      assert.match(pending.status?.conditions?.find((c) => c.type === 'PodReadyToStartContainers')?.message ?? '', /10\.300\.0\.0\/24/);
      // Between two attempts, a failed sandbox leaves no namespace behind.
      await eventually(async () => ((await leftoverNetns(net)).length === 0 ? true : undefined), { what: 'no namespace between attempts', deadlineMs: 10_000 });
    } finally {
      await writeFile(confFile, good);
    }
    await running('net-bad');
    await core.deleteNamespacedPod({ namespace: 'default', name: 'net-bad' });
    await eventually(async () => ((await kubectl(tb.kubeconfigPath, ['get', 'pod', 'net-bad'])).code === 1 ? true : undefined), { what: 'gone', deadlineMs: 20_000 });
    assert.deepEqual(await ipamAllocations(net), []);
  });
});
