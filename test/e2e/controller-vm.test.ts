// podvirt-controller's VirtualMachine controller against the testbed API server, with this test
// playing scheduler, kubelet and handler (no guest boots here; vm-lifecycle runs real ones):
// kubectl apply of a VM → one VMI owned by it → printable status as the VMI moves;
// `kubectl get vm` shows KubeVirt's columns; a controller closed right after creating the VMI and
// a new leader → still one VMI; the podvirt-controller process SIGKILLed at each write of a VM's
// start (its finalizer, the VMI's create, the status after it) and started again → one VMI, the
// VM Starting, the writes counted; kubectl delete --cascade=orphan keeps the VMI (and a VM
// applied again adopts it), a plain delete stops the VMI before the VM goes.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { CoreV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { ControllerApp } from '@podvirt/controller';
import { KubeClient, readKubeconfigFile } from '@podvirt/kube-runtime';
import type { VirtualMachine, VirtualMachineInstance } from '@podvirt/api';
import { pino } from 'pino';
import { stringify } from 'yaml';
import { eventually } from '@podvirt/test-support';
import { writeKubeconfig, type RequestRecord } from '../testbed/apiserver/index.js';
import { repoRoot, StackProcess } from '../testbed/index.js';
import { kubectl, startTestApiServer, type TestApiServer } from './testbed-helpers.js';

const NS = 'default';
const vmiApi = { group: 'kubevirt.io', version: 'v1', namespace: NS, plural: 'virtualmachineinstances' };
const vmApi = { group: 'kubevirt.io', version: 'v1', namespace: NS, plural: 'virtualmachines' };

/** The object, or undefined when the API server has none of that name. */
async function readObject<T>(custom: CustomObjectsApi, api: typeof vmApi, name: string): Promise<T | undefined> {
  try {
    return (await custom.getNamespacedCustomObject({ ...api, name })) as T;
  } catch (err) {
    if ((err as { code?: number }).code === 404) return undefined;
    throw err;
  }
}

function vmManifest(name: string, runStrategy: string): VirtualMachine {
  return {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachine',
    metadata: { name, namespace: NS },
    spec: {
      runStrategy: runStrategy as 'Always',
      template: {
        metadata: { labels: { 'kubevirt.io/domain': name } },
        spec: {
          domain: { devices: { disks: [{ name: 'root', disk: { bus: 'virtio' } }] }, resources: { requests: { memory: '128Mi' } } },
          volumes: [{ name: 'root', containerDisk: { image: 'guest:e2e' } }],
        },
      },
    },
  };
}

describe('VirtualMachine controller end to end (testbed API server)', () => {
  let tb: TestApiServer;
  let client: KubeClient;
  let custom: CustomObjectsApi;
  let core: CoreV1Api;
  const apps: ControllerApp[] = [];
  const startController = async (identity: string): Promise<ControllerApp> => {
    const app = await ControllerApp.start({
      client,
      log: pino({ level: 'silent' }),
      launcherImage: 'podvirt/launcher:e2e',
      allowEmulation: true,
      workers: 2,
      leaderElection: { namespace: 'kube-system', name: 'podvirt-controller', identity },
    });
    apps.push(app);
    return app;
  };

  before(async () => {
    tb = await startTestApiServer();
    custom = tb.kubeConfig.makeApiClient(CustomObjectsApi);
    core = tb.kubeConfig.makeApiClient(CoreV1Api);
    client = await KubeClient.create(await readKubeconfigFile(tb.kubeconfigPath));
    await core.createNode({ body: { metadata: { name: 'node01', labels: { 'kubevirt.io/schedulable': 'true' } } } });
  });
  after(async () => {
    for (const app of apps) await app.close();
    await client.close();
    await tb.close();
  });

  const vm = (name: string): Promise<VirtualMachine | undefined> => readObject<VirtualMachine>(custom, vmApi, name);
  const vmi = (name: string): Promise<VirtualMachineInstance | undefined> => readObject<VirtualMachineInstance>(custom, vmiApi, name);
  const apply = async (manifest: VirtualMachine): Promise<void> => {
    const out = await kubectl(tb.kubeconfigPath, ['apply', '-f', '-'], stringify(manifest));
    assert.equal(out.code, 0, out.stderr);
  };
  const printable = (name: string, want: string): Promise<VirtualMachine> =>
    eventually(async () => {
      const found = await vm(name);
      return found?.status?.printableStatus === want ? found : undefined;
    }, { what: `VM ${name} ${want}`, deadlineMs: 15_000 });
  /**
   * Scheduler, kubelet and handler once the guest runs: the launcher pod bound and Ready, then the
   * VMI's phase Running (its Ready condition is the controller's, copied from the pod).
   */
  const reportRunning = async (name: string): Promise<void> => {
    const uid = (await vmi(name))?.metadata.uid ?? '';
    const pod = await eventually(async () => (await core.listNamespacedPod({ namespace: NS })).items.find((p) => p.metadata?.ownerReferences?.some((r) => r.uid === uid)), { what: `launcher pod of ${name}`, deadlineMs: 15_000 });
    const podName = pod.metadata?.name ?? '';
    await core.createNamespacedPodBinding({ name: podName, namespace: NS, body: { metadata: { name: podName }, target: { kind: 'Node', name: 'node01' } } });
    await core.patchNamespacedPodStatus(
      { name: podName, namespace: NS, body: { status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    await eventually(async () => ((await vmi(name))?.status?.phase === 'Scheduled' ? true : undefined), { what: `VMI ${name} Scheduled`, deadlineMs: 15_000 });
    await custom.patchNamespacedCustomObjectStatus(
      { ...vmiApi, name, body: { status: { phase: 'Running', phaseTransitionTimestamps: [{ phase: 'Running', phaseTransitionTimestamp: new Date().toISOString().replace(/\.\d+Z$/, 'Z') }] } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
  };

  test('a VM in KubeVirt form gets one VMI it owns; kubectl get vm prints AGE STATUS READY; a new leader after a crash makes no second VMI', async () => {
    const first = await startController('replica-a');
    await apply(vmManifest('vm-one', 'Always'));
    const made = await eventually(() => vmi('vm-one'), { what: 'VMI made', deadlineMs: 15_000 });
    // The first controller goes away right after the create; a second replica takes the Lease.
    await first.close();
    await startController('replica-b');
    assert.deepEqual(made.metadata.ownerReferences, [{ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', name: 'vm-one', uid: (await vm('vm-one'))?.metadata.uid ?? '', controller: true, blockOwnerDeletion: true }]);
    assert.equal(made.metadata.labels?.['kubevirt.io/vm'], 'vm-one');
    assert.equal(made.metadata.annotations?.['kubevirt.io/vm-generation'], '1');
    await printable('vm-one', 'Starting');
    const table = await kubectl(tb.kubeconfigPath, ['get', 'vm']);
    const [header, row] = table.stdout.trim().split('\n').map((l) => l.trim().split(/\s+/));
    assert.deepEqual(header, ['NAME', 'AGE', 'STATUS', 'READY']);
    assert.deepEqual([row?.[0], row?.[2], row?.[3]], ['vm-one', 'Starting', 'False']);

    await reportRunning('vm-one');
    // Running and ready: the VMI's Ready condition follows the pod's, and the VM mirrors it.
    const running = await eventually(async () => {
      const found = await vm('vm-one');
      return found?.status?.printableStatus === 'Running' && found.status.ready === true ? found : undefined;
    }, { what: 'VM vm-one Running and ready', deadlineMs: 15_000 });
    assert.equal(running.status?.conditions?.find((c) => c.type === 'Ready')?.status, 'True');
    assert.equal((await vmi('vm-one'))?.metadata.uid, made.metadata.uid, 'still the one VMI');
    const events = (await core.listNamespacedEvent({ namespace: NS })).items.filter((e) => e.involvedObject.kind === 'VirtualMachine' && e.involvedObject.name === 'vm-one');
    assert.equal(events.filter((e) => e.reason === 'SuccessfulCreate').length, 1);
  });

  test('a template change while running sets RestartRequired; stop through runStrategy Halted deletes the VMI', async () => {
    const changed = vmManifest('vm-one', 'Always');
    changed.spec.template.spec.domain.resources = { requests: { memory: '256Mi' } };
    await apply(changed);
    await eventually(async () => ((await vm('vm-one'))?.status?.conditions?.find((c) => c.type === 'RestartRequired' && c.status === 'True')), { what: 'RestartRequired', deadlineMs: 15_000 });
    await apply({ ...changed, spec: { ...changed.spec, runStrategy: 'Halted' } });
    await eventually(async () => ((await vmi('vm-one'))?.metadata.deletionTimestamp !== undefined ? true : undefined), { what: 'VMI deleted', deadlineMs: 15_000 });
    await printable('vm-one', 'Stopping');
    // The handler shuts the guest down: the VMI ends, and its finalizer comes off.
    await custom.patchNamespacedCustomObjectStatus({ ...vmiApi, name: 'vm-one', body: { status: { phase: 'Succeeded' } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
    // The controller deletes the launcher pod; the kubelet sees its containers gone and removes it.
    const terminating = await eventually(async () => (await core.listNamespacedPod({ namespace: NS })).items.find((p) => p.metadata?.labels?.['kubevirt.io/domain'] === 'vm-one' && p.metadata.deletionTimestamp !== undefined), { what: 'launcher pod deleted', deadlineMs: 15_000 });
    await core.deleteNamespacedPod({ name: terminating.metadata?.name ?? '', namespace: NS, gracePeriodSeconds: 0 });
    await eventually(async () => ((await vmi('vm-one')) === undefined ? true : undefined), { what: 'VMI gone', deadlineMs: 20_000 });
    const stopped = await printable('vm-one', 'Stopped');
    assert.equal(stopped.status?.conditions?.some((c) => c.type === 'RestartRequired'), false);
  });

  test('kubectl delete --cascade=orphan keeps the VMI and a VM of its name adopts it; a plain delete stops the VMI before the VM goes', async () => {
    await apply(vmManifest('vm-orphan', 'Always'));
    await eventually(() => vmi('vm-orphan'), { what: 'VMI made', deadlineMs: 15_000 });
    const orphaned = await kubectl(tb.kubeconfigPath, ['delete', 'vm', 'vm-orphan', '--cascade=orphan']);
    assert.equal(orphaned.code, 0, orphaned.stderr);
    await eventually(async () => ((await vm('vm-orphan')) === undefined ? true : undefined), { what: 'VM gone', deadlineMs: 15_000 });
    const kept = await eventually(async () => {
      const found = await vmi('vm-orphan');
      return found !== undefined && (found.metadata.ownerReferences ?? []).length === 0 ? found : undefined;
    }, { what: 'VMI kept without owner', deadlineMs: 15_000 });
    assert.equal(kept.metadata.deletionTimestamp, undefined);
    // The VM applied again adopts the VMI of its name, as KubeVirt's controller does: no second VMI.
    await apply(vmManifest('vm-orphan', 'Always'));
    const again = await eventually(() => vm('vm-orphan'), { what: 'VM again', deadlineMs: 15_000 });
    const adopted = await eventually(async () => {
      const found = await vmi('vm-orphan');
      return found?.metadata.ownerReferences?.some((r) => r.uid === again.metadata.uid && r.controller === true) === true ? found : undefined;
    }, { what: 'VMI adopted', deadlineMs: 15_000 });
    assert.equal(adopted.metadata.uid, kept.metadata.uid, 'the same VMI');
    await printable('vm-orphan', 'Starting');
    const adoptEvents = (await core.listNamespacedEvent({ namespace: NS })).items.filter((e) => e.involvedObject.uid === again.metadata.uid);
    assert.deepEqual(adoptEvents.map((e) => e.reason), ['SuccessfulAdopt']);
    // Orphaned again, then the VMI deleted by hand: the VM controller's finalizer does not hold it.
    assert.equal((await kubectl(tb.kubeconfigPath, ['delete', 'vm', 'vm-orphan', '--cascade=orphan'])).code, 0);
    await eventually(async () => ((await vm('vm-orphan')) === undefined ? true : undefined), { what: 'VM gone again', deadlineMs: 15_000 });
    await custom.deleteNamespacedCustomObject({ ...vmiApi, name: 'vm-orphan' });
    await eventually(async () => ((await vmi('vm-orphan')) === undefined ? true : undefined), { what: 'orphan VMI gone', deadlineMs: 30_000 });

    await apply(vmManifest('vm-gc', 'Always'));
    await eventually(() => vmi('vm-gc'), { what: 'VMI made', deadlineMs: 15_000 });
    // kubectl waits until the VM is gone: its finalizer holds it until its VMI is.
    assert.equal((await kubectl(tb.kubeconfigPath, ['delete', 'vm', 'vm-gc', '--timeout=60s'])).code, 0);
    assert.equal(await vmi('vm-gc'), undefined, 'the VMI went before the VM');
    const stopEvents = (await core.listNamespacedEvent({ namespace: NS })).items.filter((e) => e.involvedObject.name === 'vm-gc' && e.involvedObject.kind === 'VirtualMachine');
    assert.ok(stopEvents.some((e) => e.reason === 'SuccessfulDelete' && (e.message ?? '').includes('being deleted')), 'the VM stopped its VMI');
  });
});

describe('podvirt-controller SIGKILLed while it starts a VM (testbed API server)', () => {
  const USER = 'podvirt-controller-under-test';
  let tb: TestApiServer;
  let custom: CustomObjectsApi;
  let kubeconfig: string;
  const requests: RequestRecord[] = [];
  /** The request the running process is killed at, as it reaches the API server. */
  let killAt: ((r: RequestRecord) => boolean) | undefined;
  let current: StackProcess | undefined;
  const bin = join(repoRoot(import.meta.url), 'packages/controller/bin/podvirt-controller.js');

  before(async () => {
    tb = await startTestApiServer();
    custom = tb.kubeConfig.makeApiClient(CustomObjectsApi);
    // Its own token, so its requests are told from the test's in the audit hook.
    kubeconfig = join(tb.dir, 'controller-kubeconfig');
    await writeKubeconfig(kubeconfig, tb.server.url, USER);
    tb.server.onRequest((r) => {
      if (r.user !== USER) return;
      requests.push(r);
      if (killAt?.(r) === true) {
        killAt = undefined;
        current?.kill('SIGKILL');
      }
    });
  });
  after(async () => {
    await current?.stop();
    await tb.close();
  });

  /** The controller as its Deployment runs it; a restarted container keeps its pod's name, so it takes its own Lease back at once. */
  const startProcess = async (): Promise<StackProcess> => {
    const proc = new StackProcess({
      name: 'controller',
      argv: [process.execPath, bin, '--kubeconfig', kubeconfig, '--leader-elect', '--workers', '2', '--launcher-image', 'podvirt/launcher:e2e', '--metrics-port', '0'],
      env: { ...process.env, POD_NAME: 'podvirt-controller-0' },
    });
    current = proc;
    await eventually(() => {
      if (!proc.running) assert.fail(`the controller exited\n${proc.tail()}`);
      return proc.lines.find((l) => l.msg === 'controller started');
    }, { what: 'controller started', deadlineMs: 30_000 });
    return proc;
  };
  const vm = (name: string): Promise<VirtualMachine | undefined> => readObject<VirtualMachine>(custom, vmApi, name);
  const vmisOf = async (name: string): Promise<VirtualMachineInstance[]> =>
    ((await custom.listNamespacedCustomObject({ ...vmiApi, labelSelector: `kubevirt.io/vm=${name}` })) as { items: VirtualMachineInstance[] }).items;
  /** The VM controller's writes for this VM: to the VM, and the VMI's create (which names no object: counted by kind, one VM at a time). */
  const writesFor = (name: string, from: number): string[] =>
    requests
      .slice(from)
      .filter((r) => ['create', 'update', 'patch', 'delete'].includes(r.verb) && (r.resource.startsWith('virtualmachines') ? r.name === name : r.resource === 'virtualmachineinstances' && (r.verb !== 'patch' || r.name !== name)))
      .map((r) => `${r.verb} ${r.resource}`);
  const count = (writes: readonly string[], write: string): number => writes.filter((w) => w === write).length;
  /** Started, and its VMI moved on to Scheduling (its launcher pod made): as far as a node-less testbed goes. */
  const started = (name: string): Promise<VirtualMachine> =>
    eventually(async () => {
      const found = await vm(name);
      const vmis = await vmisOf(name);
      return found?.status?.printableStatus === 'Starting' && found.status.created === true && vmis[0]?.status?.phase === 'Scheduling' ? found : undefined;
    }, { what: `VM ${name} Starting, its VMI Scheduling`, deadlineMs: 30_000 });
  let baseline: string[] = [];

  test('without a kill: the writes of one VM start, for comparison', async (t) => {
    await startProcess();
    const from = requests.length;
    const out = await kubectl(tb.kubeconfigPath, ['apply', '-f', '-'], stringify(vmManifest('vm-unkilled', 'Always')));
    assert.equal(out.code, 0, out.stderr);
    await started('vm-unkilled');
    await current?.stop();
    baseline = writesFor('vm-unkilled', from);
    t.diagnostic(`writes: ${baseline.join(', ')}`);
    assert.equal(count(baseline, 'create virtualmachineinstances'), 1);
    assert.equal(count(baseline, 'patch virtualmachines'), 1, 'its finalizer');
  });

  const killPoints: ReadonlyArray<readonly [string, (r: RequestRecord) => boolean]> = [
    ['its finalizer on the VM', (r) => r.verb === 'patch' && r.resource === 'virtualmachines'],
    ['the VMI create', (r) => r.verb === 'create' && r.resource === 'virtualmachineinstances'],
    ['the VM status after the create', (r) => r.verb === 'update' && r.resource === 'virtualmachines/status'],
  ];
  for (const [index, [what, point]] of killPoints.entries()) {
    test(`kill -9 at ${what}: after a restart, one VMI, the VM Starting, the restarted controller's writes counted`, async (t) => {
      const name = `vm-kill-${index}`;
      const roundStart = requests.length;
      const first = await startProcess();
      killAt = point;
      const out = await kubectl(tb.kubeconfigPath, ['apply', '-f', '-'], stringify(vmManifest(name, 'Always')));
      assert.equal(out.code, 0, out.stderr);
      const exit = await first.exited;
      assert.equal(exit.signal, 'SIGKILL', 'killed by the signal, not closed');
      const madeBeforeKill = (await vmisOf(name)).length;
      const from = requests.length;
      await startProcess();
      const settled = await started(name);
      const vmis = await vmisOf(name);
      assert.equal(vmis.length, 1, 'exactly one VMI');
      const [only] = vmis;
      assert.equal(only?.metadata.ownerReferences?.[0]?.uid, settled.metadata.uid, 'owned by the VM');
      assert.ok(only?.metadata.finalizers?.includes('kubevirt.io/virtualMachineControllerFinalize'));
      assert.ok(settled.metadata.finalizers?.includes('kubevirt.io/virtualMachineControllerFinalize'));
      assert.equal(settled.status?.conditions?.some((c) => c.type === 'Failure'), false, 'no failure recorded');
      await current?.stop();
      const after = writesFor(name, from);
      const total = writesFor(name, roundStart);
      t.diagnostic(`VMI made before the kill: ${madeBeforeKill}; writes after the restart: ${after.join(', ') || 'none'}; both processes: ${total.length} (no kill: ${baseline.length})`);
      assert.equal(count(after, 'create virtualmachineinstances'), 1 - madeBeforeKill, 'a VMI is created only when the killed process had not made one');
      assert.equal(count(total, 'delete virtualmachineinstances'), 0, 'nothing stopped');
      assert.ok(count(after, 'patch virtualmachines') <= 1, 'the finalizer added at most once more');
      assert.ok(count(total, 'patch virtualmachines') <= 2);
      assert.ok(total.length <= baseline.length + 1, `the kill costs at most the write it cut short: ${total.length} against ${baseline.length}`);
    });
  }
});
