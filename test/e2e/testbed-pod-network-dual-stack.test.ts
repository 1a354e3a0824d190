// The testbed's opt-in dual-stack pod network (PODVIRT_TESTBED_IPV6=1): host-local hands each
// pod an IPv4 address and one from the stack's ULA /64, the host reaches the pod over both, and
// the /64 exists only on the stack's bridge.
import assert from 'node:assert/strict';
import { mkdtemp, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { CoreV1Api, KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { eventually } from '@podvirt/test-support';
import { startTestbed, type Testbed } from '../testbed/cli/index.js';
import { readTcp } from '../testbed/sandbox/read-tcp.js';
import { runCommand } from '../testbed/sandbox/run-command.js';
import { ipv6Range, stackNetwork, type StackNetwork } from '../testbed/sandbox/stack-network.js';

describe('testbed pod network, dual-stack', () => {
  let tb: Testbed;
  let core: CoreV1Api;
  let net: StackNetwork;
  before(async () => {
    process.env['PODVIRT_TESTBED_IPV6'] = '1';
    try {
      tb = await startTestbed({ stateDir: await mkdtemp(join(tmpdir(), 'podvirt-testbed-net6-')) });
    } finally {
      delete process.env['PODVIRT_TESTBED_IPV6'];
    }
    const kc = new KubeConfig();
    kc.loadFromFile(tb.kubeconfigPath);
    core = kc.makeApiClient(CoreV1Api);
    net = stackNetwork(tb.kubeletRoot);
  });
  after(async () => {
    await tb.close();
    assert.equal((await runCommand(['ip', 'link', 'show', net.bridge])).code, 1, 'the bridge is gone');
  });

  test('a pod reports both families; the host reaches it over IPv6; only the bridge carries the /64', async () => {
    await core.createNamespacedPod({
      namespace: 'default',
      body: {
        metadata: { name: 'net6' },
        spec: { restartPolicy: 'Never', terminationGracePeriodSeconds: 1, containers: [{ name: 'main', image: 'busybox', command: ['sh', '-c', 'while true; do echo hello6 | busybox nc -l -p 8080; done'] }] },
      },
    });
    const pod = (): Promise<V1Pod> => core.readNamespacedPod({ namespace: 'default', name: 'net6' });
    const running = await eventually(async () => ((await pod()).status?.phase === 'Running' ? pod() : undefined), { what: 'net6 running', deadlineMs: 20_000 });
    const ips = running.status?.podIPs?.map((p) => p.ip) ?? [];
    assert.equal(ips.length, 2);
    assert.match(ips[0] ?? '', /^10\.20[0-7]\.\d+\.\d+$/, 'IPv4 first, as podIP');
    assert.equal(running.status?.podIP, ips[0]);
    const range = ipv6Range(`${(ips[0] ?? '').split('.').slice(0, 3).join('.')}.0/24`);
    assert.ok((ips[1] ?? '').startsWith(range.subnet.replace(/:\/64$/, '')), `${ips[1] ?? ''} is in ${range.subnet}`);
    assert.equal(await eventually(() => readTcp(ips[1] ?? '', 8080).catch(() => undefined), { what: 'host → pod over IPv6', deadlineMs: 10_000 }), 'hello6\n');

    // The host knows the ULA prefix only as the bridge's connected /64, and forwards nothing.
    const routes = (await runCommand(['ip', '-6', 'route', 'show', 'match', ips[1] ?? ''])).stdout.trim().split('\n');
    assert.deepEqual(routes.filter((r) => r.startsWith('fd70:')).map((r) => r.split(/\s+/).slice(0, 3).join(' ')), [`${range.subnet} dev ${net.bridge}`]);
    await core.deleteNamespacedPod({ namespace: 'default', name: 'net6' });
    await eventually(async () => ((await core.listNamespacedPod({ namespace: 'default' })).items.length === 0 ? true : undefined), { what: 'pod gone', deadlineMs: 20_000 });
    const left = await readdir(join(net.ipamDir, net.networkName)).catch(() => [] as string[]);
    assert.deepEqual(left.filter((f) => /^[0-9.]+$|:/.test(f)), [], "host-local's state dir holds no allocation of either family");
  });
});
