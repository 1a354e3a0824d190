// The testbed kubelet runs a pod's init containers one after another, each to completion,
// before its containers; a failing one under restartPolicy Never fails the pod.
import assert from 'node:assert/strict';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { CoreV1Api, KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { eventually } from '@podvirt/test-support';
import { startTestbed, type Testbed } from '../cli/start-testbed.js';

describe('testbed kubelet: init containers', () => {
  let tb: Testbed;
  let core: CoreV1Api;
  before(async () => {
    tb = await startTestbed({ stateDir: await mkdtemp(join(tmpdir(), 'podvirt-init-')) });
    const kc = new KubeConfig();
    kc.loadFromFile(tb.kubeconfigPath);
    core = kc.makeApiClient(CoreV1Api);
  });
  after(() => tb.close());

  const read = (name: string): Promise<V1Pod> => core.readNamespacedPod({ namespace: 'default', name });
  const sh = (name: string, script: string) => ({ name, image: 'busybox', command: ['sh', '-c', script], volumeMounts: [{ name: 'shared', mountPath: '/shared' }] });

  test('init containers run in order, each to completion, before the containers start', async () => {
    await core.createNamespacedPod({ namespace: 'default', body: {
      metadata: { name: 'ordered' },
      spec: {
        restartPolicy: 'Never',
        terminationGracePeriodSeconds: 2,
        volumes: [{ name: 'shared', emptyDir: {} }],
        // The first one is slow: were they started together, the second would write first.
        initContainers: [sh('first', 'sleep 0.5; echo first >> /shared/order'), sh('second', 'echo second >> /shared/order')],
        containers: [sh('main', 'echo main >> /shared/order; cat /shared/order; sleep 30')],
      },
    } });
    const running = await eventually(async () => ((await read('ordered')).status?.phase === 'Running' ? read('ordered') : undefined), { what: 'ordered running', deadlineMs: 20_000 });
    assert.deepEqual(running.status?.initContainerStatuses?.map((s) => [s.name, s.state?.terminated?.reason]), [['first', 'Completed'], ['second', 'Completed']]);
    assert.equal(running.status?.conditions?.find((c) => c.type === 'Initialized')?.status, 'True');
    const logs = await eventually(async () => {
      const text = await core.readNamespacedPodLog({ namespace: 'default', name: 'ordered', container: 'main' });
      return text.includes('main') ? text : undefined;
    }, { what: 'main output', deadlineMs: 20_000 });
    assert.equal(logs, 'first\nsecond\nmain\n');
    await core.deleteNamespacedPod({ namespace: 'default', name: 'ordered' });
  });

  test('a failing init container fails a restartPolicy Never pod; later ones and the containers never run', async () => {
    await core.createNamespacedPod({ namespace: 'default', body: {
      metadata: { name: 'broken' },
      spec: {
        restartPolicy: 'Never',
        volumes: [{ name: 'shared', emptyDir: {} }],
        initContainers: [sh('fails', 'exit 4'), sh('later', 'true')],
        containers: [sh('main', 'sleep 30')],
      },
    } });
    const failed = await eventually(async () => ((await read('broken')).status?.phase === 'Failed' ? read('broken') : undefined), { what: 'broken failed', deadlineMs: 20_000 });
    const init = failed.status?.initContainerStatuses ?? [];
    assert.deepEqual([init[0]?.state?.terminated?.exitCode, init[1]?.state?.waiting?.reason], [4, 'PodInitializing']);
    assert.equal(failed.status?.containerStatuses?.[0]?.state?.waiting?.reason, 'PodInitializing');
    assert.equal(failed.status?.conditions?.find((c) => c.type === 'Initialized')?.status, 'False');
    await core.deleteNamespacedPod({ namespace: 'default', name: 'broken' });
  });
});
