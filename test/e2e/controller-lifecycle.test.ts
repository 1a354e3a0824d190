// podvirt-controller against the testbed API server, with this test playing scheduler and
// kubelet: VMI → launcher pod → Scheduling → Scheduled; pod lost → Failed; VMI deleted →
// pod deleted and finalizer removed; the Lease is held while running and handed back on close.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CoordinationV1Api, CoreV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions, type V1Pod } from '@kubernetes/client-node';
import { ControllerApp, LAUNCHER_MONITOR_COMMAND } from '@podvirt/controller';
import { KubeClient, readKubeconfigFile } from '@podvirt/kube-runtime';
import type { VirtualMachineInstance } from '@podvirt/api';
import { pino } from 'pino';
import { eventually } from '@podvirt/test-support';
import { startTestApiServer, type TestApiServer } from './testbed-helpers.js';

const NS = 'default';
const vmiApi = { group: 'kubevirt.io', version: 'v1', namespace: NS, plural: 'virtualmachineinstances' };

function vmiManifest(name: string): VirtualMachineInstance {
  return {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachineInstance',
    metadata: { name, namespace: NS, labels: { app: name } },
    spec: {
      terminationGracePeriodSeconds: 5,
      domain: { devices: { disks: [{ name: 'root', disk: { bus: 'virtio' } }] }, resources: { requests: { memory: '128Mi' } } },
      volumes: [{ name: 'root', containerDisk: { image: 'guest:e2e' } }],
    },
  };
}

describe('podvirt-controller end to end (testbed API server)', () => {
  let tb: TestApiServer;
  let app: ControllerApp;
  let client: KubeClient;
  let core: CoreV1Api;
  let custom: CustomObjectsApi;

  before(async () => {
    tb = await startTestApiServer();
    core = tb.kubeConfig.makeApiClient(CoreV1Api);
    custom = tb.kubeConfig.makeApiClient(CustomObjectsApi);
    await core.createNode({ body: { metadata: { name: 'node01', labels: { 'kubevirt.io/schedulable': 'true' } } } });
    client = await KubeClient.create(await readKubeconfigFile(tb.kubeconfigPath));
    app = await ControllerApp.start({
      client,
      log: pino({ level: 'silent' }),
      launcherImage: 'podvirt/launcher:e2e',
      allowEmulation: true,
      workers: 2,
      leaderElection: { namespace: 'kube-system', name: 'podvirt-controller', identity: 'e2e-replica' },
    });
  });
  after(async () => {
    await app.close();
    await client.close();
    await tb.close();
  });

  const getVmi = async (name: string): Promise<VirtualMachineInstance | undefined> => {
    try {
      return (await custom.getNamespacedCustomObject({ ...vmiApi, name })) as VirtualMachineInstance;
    } catch (err) {
      if ((err as { code?: number }).code === 404) return undefined;
      throw err;
    }
  };
  const vmiInPhase = (name: string, phase: string) => () =>
    getVmi(name).then((v) => (v?.status?.phase === phase ? v : undefined));
  const podsOf = async (uid: string): Promise<V1Pod[]> =>
    (await core.listNamespacedPod({ namespace: NS, labelSelector: `kubevirt.io/created-by=${uid}` })).items;
  const eventReasons = async (name: string): Promise<string[]> =>
    (await core.listNamespacedEvent({ namespace: NS })).items.filter((e) => e.involvedObject.name === name).map((e) => `${e.type ?? ''} ${e.reason ?? ''}`);

  test('the controller holds the Lease while it runs', async () => {
    const coordination = tb.kubeConfig.makeApiClient(CoordinationV1Api);
    const lease = await eventually(async () => {
      const l = await coordination.readNamespacedLease({ name: 'podvirt-controller', namespace: 'kube-system' }).catch(() => undefined);
      return l?.spec?.holderIdentity === 'e2e-replica' ? l : undefined;
    }, { what: 'lease', deadlineMs: 10_000 });
    assert.equal(lease.spec?.leaseDurationSeconds, 15);
  });

  test('VMI → launcher pod → Scheduling → Scheduled → pod lost → Failed → deleted', async () => {
    await custom.createNamespacedCustomObject({ ...vmiApi, body: vmiManifest('vm-a') });
    const scheduling = await eventually(vmiInPhase('vm-a', 'Scheduling'), { what: 'Scheduling', deadlineMs: 10_000 });
    const uid = scheduling.metadata.uid ?? '';
    assert.deepEqual(scheduling.metadata.finalizers, ['foregroundDeleteVirtualMachine']);
    assert.deepEqual(scheduling.status?.phaseTransitionTimestamps?.map((t) => t.phase), ['Pending', 'Scheduling']);
    const pods = await podsOf(uid);
    assert.equal(pods.length, 1);
    const pod = pods[0] as V1Pod;
    assert.ok(pod.metadata?.name?.startsWith('virt-launcher-vm-a-'));
    const compute = pod.spec?.containers[0];
    assert.deepEqual(compute?.command, [LAUNCHER_MONITOR_COMMAND]);
    assert.ok(compute?.args?.includes('--allow-emulation'));
    assert.equal(compute?.args?.[compute.args.indexOf('--grace-period-seconds') + 1], '20');
    assert.equal(pod.spec?.terminationGracePeriodSeconds, 35);
    assert.equal(pod.metadata?.ownerReferences?.[0]?.uid, uid);
    assert.equal(pod.metadata?.labels?.['kubevirt.io'], 'virt-launcher');

    // Scheduler and kubelet: bind the pod, then report it running and ready.
    const podName = pod.metadata?.name ?? '';
    await core.createNamespacedPodBinding({ name: podName, namespace: NS, body: { metadata: { name: podName }, target: { kind: 'Node', name: 'node01' } } });
    await core.patchNamespacedPodStatus(
      { name: podName, namespace: NS, body: { status: { phase: 'Running', qosClass: 'Burstable', conditions: [{ type: 'Ready', status: 'True' }] } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    // The status write comes first and the node label right after it (sync-vmi.ts): wait for both.
    const scheduled = await eventually(() =>
      getVmi('vm-a').then((v) => (v?.status?.phase === 'Scheduled' && v.metadata.labels?.['kubevirt.io/nodeName'] !== undefined ? v : undefined)), { what: 'Scheduled and labelled', deadlineMs: 10_000 });
    assert.equal(scheduled.status?.nodeName, 'node01');
    assert.equal(scheduled.metadata.labels?.['kubevirt.io/nodeName'], 'node01');
    assert.deepEqual(scheduled.status?.activePods, { [pod.metadata?.uid ?? '']: 'node01' });
    assert.equal(scheduled.status?.qosClass, 'Burstable');
    assert.equal(scheduled.status?.launcherContainerImageVersion, 'podvirt/launcher:e2e');

    // The pod disappears (force-deleted): the VMI fails with a reason and a Warning.
    await core.deleteNamespacedPod({ name: podName, namespace: NS, gracePeriodSeconds: 0 });
    const failed = await eventually(vmiInPhase('vm-a', 'Failed'), { what: 'Failed', deadlineMs: 10_000 });
    assert.equal(failed.status?.reason, 'PodNotExists');
    assert.ok((await eventReasons('vm-a')).includes('Warning PodNotExists'));

    await custom.deleteNamespacedCustomObject({ ...vmiApi, name: 'vm-a' });
    await eventually(async () => ((await getVmi('vm-a')) === undefined ? true : undefined), { what: 'vm-a gone', deadlineMs: 10_000 });
  });

  test('deleting a VMI before it reaches a node deletes its pod and removes the finalizer', async () => {
    await custom.createNamespacedCustomObject({ ...vmiApi, body: vmiManifest('vm-b') });
    const scheduling = await eventually(vmiInPhase('vm-b', 'Scheduling'), { what: 'Scheduling', deadlineMs: 10_000 });
    const uid = scheduling.metadata.uid ?? '';
    assert.equal((await podsOf(uid)).length, 1, 'exactly one pod, even with two workers');
    await custom.deleteNamespacedCustomObject({ ...vmiApi, name: 'vm-b' });
    await eventually(async () => ((await getVmi('vm-b')) === undefined ? true : undefined), { what: 'vm-b gone', deadlineMs: 10_000 });
    assert.deepEqual(await podsOf(uid), []);
    const reasons = await eventReasons('vm-b');
    assert.ok(reasons.includes('Normal SuccessfulCreate'), reasons.join(', '));
    assert.ok(reasons.includes('Normal SuccessfulDelete'), reasons.join(', '));
  });

  test('a VMI podvirt cannot run stays Pending with FailedCreate, and gets no pod', async () => {
    const bad = vmiManifest('vm-bad');
    bad.spec.domain.devices.disks = [{ name: 'nowhere', disk: { bus: 'virtio' } }];
    await custom.createNamespacedCustomObject({ ...vmiApi, body: bad });
    const pending = await eventually(async () => {
      const v = await getVmi('vm-bad');
      return v?.status?.conditions?.some((c) => c.type === 'Synchronized' && c.reason === 'FailedCreate') ? v : undefined;
    }, { what: 'FailedCreate', deadlineMs: 10_000 });
    assert.equal(pending.status?.phase, 'Pending');
    assert.deepEqual(await podsOf(pending.metadata.uid ?? ''), []);
    assert.ok((await eventReasons('vm-bad')).includes('Warning SyncFailed'));
  });

  test('after dropped watches and a compacted history (410 Gone) the informers relist and carry on', async () => {
    tb.server.compact();
    assert.ok(tb.server.dropWatches() >= 2, 'the VMI and pod watches were open');
    await custom.createNamespacedCustomObject({ ...vmiApi, body: vmiManifest('vm-c') });
    const scheduling = await eventually(vmiInPhase('vm-c', 'Scheduling'), { what: 'Scheduling after relist', deadlineMs: 10_000 });
    assert.equal((await podsOf(scheduling.metadata.uid ?? '')).length, 1);
  });

  test('close() hands the Lease back', async () => {
    await app.close();
    const lease = await tb.kubeConfig.makeApiClient(CoordinationV1Api).readNamespacedLease({ name: 'podvirt-controller', namespace: 'kube-system' });
    assert.equal(lease.spec?.holderIdentity ?? '', '');
  });
});
