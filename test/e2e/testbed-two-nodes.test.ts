// The testbed with two nodes (`nodes: 2`, what migration needs): two kubelets registering two
// Ready nodes, each running its own pods in its own directory, and pods on one node reaching
// pods on the other over the shared pod network; everything gone after close.
import assert from 'node:assert/strict';
import { access, mkdtemp, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { CoreV1Api, KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { eventually } from '@podvirt/test-support';
import { startTestbed, type Testbed } from '../testbed/cli/index.js';
import { runCommand } from '../testbed/sandbox/run-command.js';
import { stackNetwork, type StackNetwork } from '../testbed/sandbox/stack-network.js';
import { kubectl } from './testbed-helpers.js';

describe('testbed with two nodes', () => {
  let tb: Testbed;
  let core: CoreV1Api;
  let net: StackNetwork;
  before(async () => {
    tb = await startTestbed({ stateDir: await mkdtemp(join(tmpdir(), 'podvirt-testbed-2n-')), nodeName: 'node-a', nodes: 2 });
    const kc = new KubeConfig();
    kc.loadFromFile(tb.kubeconfigPath);
    core = kc.makeApiClient(CoreV1Api);
    net = stackNetwork(tb.kubeletRoot);
  });
  after(async () => {
    await tb.close();
    const netns = (await readdir('/run/netns').catch(() => [] as string[])).filter((n) => n.startsWith(net.netnsPrefix));
    assert.deepEqual(netns, [], 'no network namespace is left');
    assert.equal((await runCommand(['ip', 'link', 'show', net.bridge])).code, 1, 'the bridge is gone');
  });

  const pod = (name: string): Promise<V1Pod> => core.readNamespacedPod({ namespace: 'default', name });
  const pinned = (name: string, node: string, command: string): V1Pod => ({
    metadata: { name },
    spec: {
      restartPolicy: 'Never',
      terminationGracePeriodSeconds: 1,
      nodeSelector: { 'kubernetes.io/hostname': node },
      containers: [{ name: 'main', image: 'busybox', command: ['sh', '-c', command] }],
    },
  });

  test('two Ready nodes; a pod runs on the node it is bound to, in that kubelet\'s dir; pods reach each other across nodes', async () => {
    assert.deepEqual(tb.nodes.map((n) => n.nodeName), ['node-a', 'node-a-2']);
    const nodes = await kubectl(tb.kubeconfigPath, ['get', 'nodes', '--no-headers']);
    assert.match(nodes.stdout, /^node-a\s+Ready\s/m);
    assert.match(nodes.stdout, /^node-a-2\s+Ready\s/m);

    await core.createNamespacedPod({ namespace: 'default', body: pinned('server-b', 'node-a-2', 'while true; do echo "hello from node b" | busybox nc -l -p 8080; done') });
    const server = await eventually(async () => ((await pod('server-b')).status?.phase === 'Running' ? pod('server-b') : undefined), { what: 'server on node b running', deadlineMs: 20_000 });
    assert.equal(server.spec?.nodeName, 'node-a-2');
    const uid = server.metadata?.uid ?? '';
    await access(join(tb.nodes[1]?.kubeletRoot ?? '', 'pods', uid));
    await assert.rejects(access(join(tb.kubeletRoot, 'pods', uid)), 'the first node does not run it');
    const ipB = server.status?.podIP ?? '';

    await core.createNamespacedPod({ namespace: 'default', body: pinned('client-a', 'node-a', `for i in 1 2 3 4 5 6 7 8 9 10; do busybox nc ${ipB} 8080 </dev/null && exit 0; sleep 1; done; exit 1`) });
    const client = await eventually(async () => {
      const p = await pod('client-a');
      return p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed' ? p : undefined;
    }, { what: 'client on node a done', deadlineMs: 30_000 });
    assert.equal(client.spec?.nodeName, 'node-a');
    assert.equal(client.status?.phase, 'Succeeded');
    assert.match((await kubectl(tb.kubeconfigPath, ['logs', 'client-a'])).stdout, /hello from node b\n/);
    await core.deleteNamespacedPod({ namespace: 'default', name: 'server-b' });
    await core.deleteNamespacedPod({ namespace: 'default', name: 'client-a' });
  });
});
