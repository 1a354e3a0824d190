// The testbed's scheduler and kubelet together with the API server, driven by kubectl.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { CoreV1Api, PatchStrategy, setHeaderOptions, type V1Pod } from '@kubernetes/client-node';
import { eventually } from '@podvirt/test-support';
import { startTestbed, type Testbed } from '../testbed/cli/index.js';
import { kubectl } from './testbed-helpers.js';

describe('testbed scheduler and kubelet', () => {
  let tb: Testbed;
  let core: CoreV1Api;
  before(async () => {
    tb = await startTestbed({ stateDir: await mkdtemp(join(tmpdir(), 'podvirt-testbed-')) });
    const { KubeConfig } = await import('@kubernetes/client-node');
    const kc = new KubeConfig();
    kc.loadFromFile(tb.kubeconfigPath);
    core = kc.makeApiClient(CoreV1Api);
  });
  after(() => tb.close());

  const pod = async (name: string): Promise<V1Pod> => core.readNamespacedPod({ namespace: 'default', name });
  const shellPod = (name: string, script: string, extra: Partial<V1Pod['spec']> = {}): V1Pod => ({
    metadata: { name },
    spec: { restartPolicy: 'Never', terminationGracePeriodSeconds: 5, containers: [{ name: 'main', image: 'busybox', command: ['sh', '-c', script] }], ...extra },
  });

  test('the kubelet registers a Ready node labelled with its hostname', async () => {
    const node = await core.readNode({ name: tb.nodeName });
    assert.equal(node.metadata?.labels?.['kubernetes.io/hostname'], tb.nodeName);
    assert.equal(node.status?.conditions?.find((c) => c.type === 'Ready')?.status, 'True');
    assert.ok(Number(node.status?.capacity?.['cpu']) >= 1);
    const wide = await kubectl(tb.kubeconfigPath, ['get', 'nodes', '-o', 'wide']);
    assert.match(wide.stdout, new RegExp(`${tb.nodeName}\\s+Ready\\s+<none>`));
  });

  test('pods are scheduled, run, and stream their output through kubectl logs -f', async (t) => {
    await core.createNamespacedPod({ namespace: 'default', body: {
      ...shellPod('looper', 'i=0; while true; do i=$((i+1)); echo "line $i"; echo $i > /data/count; sleep 0.2; done', {
        volumes: [{ name: 'scratch', emptyDir: {} }],
        containers: [{
          name: 'main',
          image: 'busybox',
          command: ['sh', '-c', 'i=0; while true; do i=$((i+1)); echo "line $i"; echo $i > /data/count; sleep 0.2; done'],
          volumeMounts: [{ name: 'scratch', mountPath: '/data' }],
        }],
      }),
    } });
    const running = await eventually(async () => ((await pod('looper')).status?.phase === 'Running' ? pod('looper') : undefined), { what: 'looper running', deadlineMs: 10_000 });
    assert.equal(running.spec?.nodeName, tb.nodeName);
    assert.equal(running.status?.conditions?.find((c) => c.type === 'Ready')?.status, 'True');
    const follower = spawn('kubectl', ['--kubeconfig', tb.kubeconfigPath, 'logs', '-f', 'looper'], { stdio: ['ignore', 'pipe', 'pipe'] });
    t.after(() => follower.kill());
    let out = '';
    follower.stdout.on('data', (d: Buffer) => (out += d.toString()));
    await eventually(() => (/line 8\n/.test(out) ? true : undefined), { what: 'followed lines', deadlineMs: 10_000 });
    assert.match(out, /^line 1\nline 2\n/);
    const tail = await kubectl(tb.kubeconfigPath, ['logs', 'looper', '--tail=1', '--timestamps']);
    assert.match(tail.stdout, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z line \d+\n$/);
    const events = await kubectl(tb.kubeconfigPath, ['get', 'events']);
    assert.match(events.stdout, /Normal\s+Scheduled\s+pod\/looper\s+Successfully assigned default\/looper to /);
  });

  test('an emptyDir lives under the kubelet root like the real kubelet lays it out', async () => {
    const uid = (await pod('looper')).metadata?.uid ?? '';
    const count = join(tb.kubeletRoot, 'pods', uid, 'volumes', 'kubernetes.io~empty-dir', 'scratch', 'count');
    await eventually(() => (existsSync(count) ? true : undefined), { what: 'count file', deadlineMs: 10_000 });
    assert.match(await readFile(count, 'utf8'), /^\d+\n$/);
  });

  test('graceful deletion: SIGTERM, the container ends, the pod and its directories go', async () => {
    await core.createNamespacedPod({ namespace: 'default', body: shellPod('graceful', "trap 'echo got TERM; exit 0' TERM; while true; do sleep 0.1; done") });
    const running = await eventually(async () => ((await pod('graceful')).status?.phase === 'Running' ? pod('graceful') : undefined), { what: 'running', deadlineMs: 10_000 });
    const dir = join(tb.kubeletRoot, 'pods', running.metadata?.uid ?? '');
    assert.ok(existsSync(dir));
    const deleted = await kubectl(tb.kubeconfigPath, ['delete', 'pod', 'graceful']);
    assert.equal(deleted.code, 0, deleted.stderr);
    assert.equal((await kubectl(tb.kubeconfigPath, ['get', 'pod', 'graceful'])).code, 1);
    assert.equal(existsSync(dir), false);
  });

  test('a container ignoring SIGTERM is killed after the grace period', async () => {
    await core.createNamespacedPod({ namespace: 'default', body: shellPod('stubborn', "trap '' TERM; while true; do sleep 0.1; done", { terminationGracePeriodSeconds: 1 }) });
    await eventually(async () => ((await pod('stubborn')).status?.phase === 'Running' ? true : undefined), { what: 'running', deadlineMs: 10_000 });
    const started = Date.now();
    await core.deleteNamespacedPod({ namespace: 'default', name: 'stubborn' });
    await eventually(async () => ((await kubectl(tb.kubeconfigPath, ['get', 'pod', 'stubborn'])).code === 1 ? true : undefined), { what: 'gone', deadlineMs: 10_000 });
    assert.ok(Date.now() - started >= 1000, 'waited for the grace period');
  });

  test('restartPolicy Never: exit codes become Succeeded/Completed and Failed/Error', async () => {
    await core.createNamespacedPod({ namespace: 'default', body: shellPod('ok', 'echo done') });
    await core.createNamespacedPod({ namespace: 'default', body: shellPod('bad', 'exit 3') });
    const ok = await eventually(async () => ((await pod('ok')).status?.phase === 'Succeeded' ? pod('ok') : undefined), { what: 'ok done', deadlineMs: 10_000 });
    const bad = await eventually(async () => ((await pod('bad')).status?.phase === 'Failed' ? pod('bad') : undefined), { what: 'bad done', deadlineMs: 10_000 });
    assert.deepEqual([ok.status?.containerStatuses?.[0]?.state?.terminated?.reason, ok.status?.containerStatuses?.[0]?.state?.terminated?.exitCode], ['Completed', 0]);
    assert.deepEqual([bad.status?.containerStatuses?.[0]?.state?.terminated?.reason, bad.status?.containerStatuses?.[0]?.state?.terminated?.exitCode], ['Error', 3]);
    assert.equal(ok.status?.conditions?.find((c) => c.type === 'Ready')?.reason, 'PodCompleted');
    assert.equal((await kubectl(tb.kubeconfigPath, ['logs', 'ok'])).stdout, 'done\n');
    const listing = await kubectl(tb.kubeconfigPath, ['get', 'pods', 'ok', 'bad']);
    assert.match(listing.stdout, /ok\s+0\/1\s+Completed/);
    assert.match(listing.stdout, /bad\s+0\/1\s+Error/);
  });

  test('readiness gates hold Ready until their condition is True', async () => {
    await core.createNamespacedPod({ namespace: 'default', body: shellPod('gated', 'sleep 60', { readinessGates: [{ conditionType: 'example.com/gate' }] }) });
    const running = await eventually(async () => ((await pod('gated')).status?.phase === 'Running' ? pod('gated') : undefined), { what: 'running', deadlineMs: 10_000 });
    const ready = (p: V1Pod): string | undefined => p.status?.conditions?.find((c) => c.type === 'Ready')?.status;
    assert.equal(ready(running), 'False');
    assert.equal(running.status?.conditions?.find((c) => c.type === 'ContainersReady')?.status, 'True');
    await core.patchNamespacedPodStatus({ namespace: 'default', name: 'gated', body: { status: { conditions: [{ type: 'example.com/gate', status: 'True' }] } } }, setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch));
    await eventually(async () => (ready(await pod('gated')) === 'True' ? true : undefined), { what: 'ready', deadlineMs: 10_000 });
    await core.deleteNamespacedPod({ namespace: 'default', name: 'gated', gracePeriodSeconds: 1 });
  });

  test('a pod whose nodeSelector no node matches stays Pending with FailedScheduling', async () => {
    await core.createNamespacedPod({ namespace: 'default', body: shellPod('nowhere', 'true', { nodeSelector: { 'example.com/none': 'x' } }) });
    const events = await eventually(async () => {
      const list = await core.listNamespacedEvent({ namespace: 'default', fieldSelector: 'involvedObject.name=nowhere,reason=FailedScheduling' });
      return list.items.length > 0 ? list.items : undefined;
    }, { what: 'FailedScheduling', deadlineMs: 10_000 });
    assert.match(events[0]?.message ?? '', /0\/1 nodes are available: 1 node\(s\) didn't match Pod's node affinity\/selector/);
    assert.equal((await pod('nowhere')).spec?.nodeName, undefined);
    const scheduled = await eventually(async () => (await pod('nowhere')).status?.conditions?.find((c) => c.type === 'PodScheduled'), { what: 'PodScheduled=False', deadlineMs: 10_000 });
    assert.equal(`${scheduled.status}/${scheduled.reason}`, 'False/Unschedulable');
    assert.equal(scheduled.message, events[0]?.message);
  });

  test('an image the kubelet cannot pull: ErrImagePull, then ImagePullBackOff naming the image, with Failed and BackOff Events', async () => {
    await core.createNamespacedPod({ namespace: 'default', body: { metadata: { name: 'noimage' }, spec: { containers: [{ name: 'c', image: 'registry.invalid/none:1' }] } } });
    const waiting = (reason: string) => eventually(async () => {
      const w = (await pod('noimage')).status?.containerStatuses?.[0]?.state?.waiting;
      return w?.reason === reason ? w : undefined;
    }, { what: reason, deadlineMs: 10_000 });
    assert.match((await waiting('ErrImagePull')).message ?? '', /failed to pull and unpack image "registry\.invalid\/none:1"/);
    assert.equal((await waiting('ImagePullBackOff')).message, 'Back-off pulling image "registry.invalid/none:1"');
    const list = await core.listNamespacedEvent({ namespace: 'default', fieldSelector: 'involvedObject.name=noimage' });
    const seen = list.items.map((e) => `${e.type}/${e.reason}: ${e.message ?? ''}`);
    for (const expected of ['Normal/Pulling: Pulling image "registry.invalid/none:1"', 'Warning/Failed: Error: ErrImagePull', 'Normal/BackOff: Back-off pulling image "registry.invalid/none:1"', 'Warning/Failed: Error: ImagePullBackOff']) {
      assert.ok(seen.includes(expected), `${expected} in\n${seen.join('\n')}`);
    }
    assert.equal((await pod('noimage')).status?.phase, 'Pending');
    await core.deleteNamespacedPod({ namespace: 'default', name: 'noimage', gracePeriodSeconds: 0 });
  });
});
