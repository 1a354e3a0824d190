// podvirt-controller's VirtualMachine controller against the testbed API server, with this test
// playing scheduler, kubelet and handler (no guest boots here; vm-lifecycle runs real ones):
// kubectl apply of a VM → one VMI owned by it → printable status as the VMI moves;
// `kubectl get vm` shows KubeVirt's columns; a controller killed right after creating the VMI and
// a new leader → still one VMI; kubectl delete --cascade=orphan keeps the VMI, a plain delete
// takes it.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CoreV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { ControllerApp } from '@podvirt/controller';
import { KubeClient, readKubeconfigFile } from '@podvirt/kube-runtime';
import type { VirtualMachine, VirtualMachineInstance } from '@podvirt/api';
import { pino } from 'pino';
import { stringify } from 'yaml';
import { eventually } from '@podvirt/test-support';
import { kubectl, startTestApiServer, type TestApiServer } from './testbed-helpers.js';

const NS = 'default';
const vmiApi = { group: 'kubevirt.io', version: 'v1', namespace: NS, plural: 'virtualmachineinstances' };
const vmApi = { group: 'kubevirt.io', version: 'v1', namespace: NS, plural: 'virtualmachines' };

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
  });
  after(async () => {
    for (const app of apps) await app.close();
    await client.close();
    await tb.close();
  });

  const get = async <T>(api: typeof vmApi, name: string): Promise<T | undefined> => {
    try {
      return (await custom.getNamespacedCustomObject({ ...api, name })) as T;
    } catch (err) {
      if ((err as { code?: number }).code === 404) return undefined;
      throw err;
    }
  };
  const vm = (name: string): Promise<VirtualMachine | undefined> => get<VirtualMachine>(vmApi, name);
  const vmi = (name: string): Promise<VirtualMachineInstance | undefined> => get<VirtualMachineInstance>(vmiApi, name);
  const apply = async (manifest: VirtualMachine): Promise<void> => {
    const out = await kubectl(tb.kubeconfigPath, ['apply', '-f', '-'], stringify(manifest));
    assert.equal(out.code, 0, out.stderr);
  };
  const printable = (name: string, want: string): Promise<VirtualMachine> =>
    eventually(async () => {
      const found = await vm(name);
      return found?.status?.printableStatus === want ? found : undefined;
    }, { what: `VM ${name} ${want}`, deadlineMs: 15_000 });
  /** What the handler writes when the guest runs. */
  const reportRunning = async (name: string): Promise<void> => {
    await custom.patchNamespacedCustomObjectStatus(
      { ...vmiApi, name, body: { status: { phase: 'Running', phaseTransitionTimestamps: [{ phase: 'Running', phaseTransitionTimestamp: new Date().toISOString().replace(/\.\d+Z$/, 'Z') }], conditions: [{ type: 'Ready', status: 'True' }] } } },
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
    const running = await printable('vm-one', 'Running');
    assert.equal(running.status?.ready, true);
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
    await eventually(async () => ((await vmi('vm-one')) === undefined ? true : undefined), { what: 'VMI gone', deadlineMs: 20_000 });
    const stopped = await printable('vm-one', 'Stopped');
    assert.equal(stopped.status?.conditions?.some((c) => c.type === 'RestartRequired'), false);
  });

  test('kubectl delete --cascade=orphan keeps the VMI; a plain delete takes it', async () => {
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
    await custom.deleteNamespacedCustomObject({ ...vmiApi, name: 'vm-orphan' });

    await apply(vmManifest('vm-gc', 'Always'));
    await eventually(() => vmi('vm-gc'), { what: 'VMI made', deadlineMs: 15_000 });
    assert.equal((await kubectl(tb.kubeconfigPath, ['delete', 'vm', 'vm-gc'])).code, 0);
    await eventually(async () => ((await vmi('vm-gc')) === undefined ? true : undefined), { what: 'VMI collected', deadlineMs: 30_000 });
  });
});
