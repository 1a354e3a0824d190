// The controller's half of live migration, end to end without VMs: the testbed API server, its
// real scheduler (which must honour the target pod's anti-affinity), podvirt-controller,
// podvirtctl and kubectl, with this test playing the two kubelets (pod status) and the two
// handlers (their migrationState fields, as the contract names them). The handlers' own part,
// with real VMs, is vmi-migration.test.ts.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import { CoreV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions, type V1Pod } from '@kubernetes/client-node';
import type { VirtualMachineInstance, VirtualMachineInstanceMigration, VmiMigrationState } from '@podvirt/api';
import { ControllerApp } from '@podvirt/controller';
import { KubeClient, readKubeconfigFile } from '@podvirt/kube-runtime';
import { eventually } from '@podvirt/test-support';
import { pino } from 'pino';
import { Scheduler } from '../testbed/scheduler/index.js';
import { kubectl, startTestApiServer, type TestApiServer } from './testbed-helpers.js';

const NS = 'default';
const VMI_API = { group: 'kubevirt.io', version: 'v1', namespace: NS, plural: 'virtualmachineinstances' };
const VMIM_API = { group: 'kubevirt.io', version: 'v1', namespace: NS, plural: 'virtualmachineinstancemigrations' };
const CTL = fileURLToPath(new URL('../../../packages/ctl/bin/podvirtctl.js', import.meta.url));
const DEADLINE = { deadlineMs: 20_000 };
const run = promisify(execFile);

describe('the migration controller end to end (API server, scheduler, controller; the test plays kubelets and handlers)', () => {
  let tb: TestApiServer;
  let app: ControllerApp;
  let client: KubeClient;
  let scheduler: Scheduler;
  let core: CoreV1Api;
  let custom: CustomObjectsApi;

  before(async () => {
    tb = await startTestApiServer();
    core = tb.kubeConfig.makeApiClient(CoreV1Api);
    custom = tb.kubeConfig.makeApiClient(CustomObjectsApi);
    for (const name of ['node-a', 'node-b']) {
      await core.createNode({ body: { metadata: { name, labels: { 'kubevirt.io/schedulable': 'true', 'kubernetes.io/hostname': name } } } });
      await core.patchNodeStatus(
        { name, body: { status: { conditions: [{ type: 'Ready', status: 'True' }], allocatable: { 'devices.kubevirt.io/tun': '100' }, capacity: { 'devices.kubevirt.io/tun': '100' } } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
    }
    scheduler = new Scheduler({ kubeConfig: tb.kubeConfig, logger: pino({ level: 'silent' }), retryMs: 200 });
    await scheduler.start();
    client = await KubeClient.create(await readKubeconfigFile(tb.kubeconfigPath));
    app = await ControllerApp.start({ client, log: pino({ level: 'silent' }), launcherImage: 'podvirt/launcher:e2e', allowEmulation: true, workers: 2 });
  });
  after(async () => {
    await app.close();
    await client.close();
    await scheduler.close();
    await tb.close();
  });

  const vmi = async (name: string): Promise<VirtualMachineInstance | undefined> =>
    ((await custom.getNamespacedCustomObject({ ...VMI_API, name }).catch(() => undefined)) as VirtualMachineInstance | undefined);
  const vmim = async (name: string): Promise<VirtualMachineInstanceMigration | undefined> =>
    ((await custom.getNamespacedCustomObject({ ...VMIM_API, name }).catch(() => undefined)) as VirtualMachineInstanceMigration | undefined);
  const vmimIn = (name: string, phase: string) => eventually(async () => {
    const m = await vmim(name);
    return m?.status?.phase === phase ? m : undefined;
  }, { what: `migration ${name} ${phase}`, ...DEADLINE });
  const pods = async (vmiUid: string): Promise<V1Pod[]> => (await core.listNamespacedPod({ namespace: NS, labelSelector: `kubevirt.io/created-by=${vmiUid}` })).items;
  const events = async (name: string, kind: string): Promise<string[]> =>
    (await core.listNamespacedEvent({ namespace: NS })).items
      .filter((e) => e.involvedObject.name === name && e.involvedObject.kind === kind)
      .sort((a, b) => Number(a.metadata.resourceVersion ?? 0) - Number(b.metadata.resourceVersion ?? 0))
      .map((e) => `${e.type ?? ''} ${e.reason ?? ''}`);

  /** A kubelet reporting a pod's phase. */
  async function podPhase(name: string, phase: 'Running' | 'Succeeded' | 'Failed'): Promise<void> {
    const conditions = [{ type: 'Ready', status: phase === 'Running' ? 'True' : 'False' }];
    const containerStatuses = phase === 'Running' ? [] : [{ name: 'compute', image: 'x', imageID: '', ready: false, restartCount: 0, state: { terminated: { exitCode: phase === 'Failed' ? 1 : 0, reason: phase === 'Failed' ? 'Error' : 'Completed' } } }];
    await core.patchNamespacedPodStatus({ name, namespace: NS, body: { status: { phase, conditions, containerStatuses } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
  }

  /** A handler's write of the VMI status: fresh read, its change, PUT; again on a conflict. */
  async function handlerWrites(name: string, change: (v: VirtualMachineInstance) => void): Promise<void> {
    await eventually(async () => {
      const v = await vmi(name);
      if (v === undefined) throw new Error(`no VMI ${name}`);
      change(v);
      try {
        await custom.replaceNamespacedCustomObjectStatus({ ...VMI_API, name, body: v });
        return true;
      } catch (err) {
        if ((err as { code?: number }).code === 409) return undefined;
        throw err;
      }
    }, { what: 'a handler write', ...DEADLINE });
  }
  const migrationFields = (name: string, fields: Partial<VmiMigrationState> & Record<string, unknown>) =>
    handlerWrites(name, (v) => {
      v.status = { ...v.status, migrationState: { ...v.status?.migrationState, ...fields } };
    });

  /**
   * A VMI running on node-a as the handler reports it: Running and LiveMigratable. Placed by
   * the scheduler (two empty nodes: the first by name), not pinned: a nodeSelector would hold
   * the target pod on the same node too.
   */
  async function runningVmi(name: string, migratable = true): Promise<string> {
    await custom.createNamespacedCustomObject({
      ...VMI_API,
      body: {
        apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', metadata: { name, namespace: NS },
        spec: { domain: { devices: {}, resources: { requests: { memory: '128Mi' } } }, volumes: [] },
      },
    });
    const scheduled = await eventually(async () => {
      const v = await vmi(name);
      const [pod] = v?.metadata.uid === undefined ? [] : await pods(v.metadata.uid);
      if (pod?.spec?.nodeName !== undefined && pod.status?.phase === 'Pending') await podPhase(pod.metadata?.name ?? '', 'Running');
      return v?.status?.phase === 'Scheduled' && v.metadata.labels?.['kubevirt.io/nodeName'] !== undefined ? v : undefined;
    }, { what: `${name} Scheduled`, ...DEADLINE });
    assert.equal(scheduled.status?.nodeName, 'node-a', 'the scheduler takes the first of two empty nodes');
    await handlerWrites(name, (v) => {
      v.status = {
        ...v.status, phase: 'Running', migrationMethod: 'BlockMigration',
        conditions: [...(v.status?.conditions ?? []), migratable
          ? { type: 'LiveMigratable', status: 'True', lastProbeTime: null, lastTransitionTime: null }
          : { type: 'LiveMigratable', status: 'False', reason: 'InterfaceNotLiveMigratable', message: 'cannot migrate VMI which does not use masquerade to connect to the pod network', lastProbeTime: null, lastTransitionTime: null }],
      };
    });
    return scheduled.metadata.uid ?? '';
  }

  async function ctl(args: string[]): Promise<{ stdout: string; stderr: string; code: number }> {
    try {
      const { stdout, stderr } = await run(process.execPath, [CTL, ...args, '--kubeconfig', tb.kubeconfigPath]);
      return { stdout, stderr, code: 0 };
    } catch (err) {
      const e = err as { stdout: string; stderr: string; code: number };
      return { stdout: e.stdout, stderr: e.stderr, code: e.code };
    }
  }

  /** podvirtctl migrate, then the target pod placed by the scheduler and started by its kubelet. */
  async function migrateAndStartTarget(name: string, uid: string, to: string): Promise<{ vmimName: string; target: V1Pod }> {
    const created = await ctl(['migrate', 'vmi', name]);
    assert.equal(created.code, 0, created.stderr);
    const vmimName = created.stdout.trim();
    assert.match(vmimName, /^kubevirt-migrate-vm-/);
    const m = await vmimIn(vmimName, 'Scheduling');
    const target = await eventually(async () => (await pods(uid)).find((p) => p.metadata?.labels?.['kubevirt.io/migrationJobUID'] === m.metadata.uid && p.spec?.nodeName !== undefined), { what: 'target pod bound', ...DEADLINE });
    assert.equal(target.spec?.nodeName, to, 'the anti-affinity keeps the target off the source node');
    await podPhase(target.metadata?.name ?? '', 'Running');
    await vmimIn(vmimName, 'PreparingTarget');
    return { vmimName, target };
  }

  test('A → B and back: phases, the hand-over of nodeName and labels, Events in order, kubectl get vmim', async () => {
    const uid = await runningVmi('vm-m');
    const [source] = await pods(uid);
    const { vmimName, target } = await migrateAndStartTarget('vm-m', uid, 'node-b');
    const preparing = await vmi('vm-m');
    assert.deepEqual(preparing?.status?.migrationState, {
      migrationUid: (await vmim(vmimName))?.metadata.uid, sourceNode: 'node-a', sourcePod: source?.metadata?.name, targetNode: 'node-b', targetPod: target.metadata?.name,
    });
    assert.equal(preparing?.metadata.labels?.['kubevirt.io/migrationTargetNodeName'], 'node-b');
    assert.deepEqual(Object.values(preparing?.status?.activePods ?? {}).sort(), ['node-a', 'node-b'], 'activePods lists both pods');

    await migrationFields('vm-m', { targetNodeAddress: '10.1.0.2', targetDirectMigrationNodePorts: { '40001': 0, '40002': 49152, '40003': 49153 } });
    await vmimIn(vmimName, 'TargetReady');
    await migrationFields('vm-m', { startTimestamp: new Date().toISOString(), mode: 'PreCopy' });
    await vmimIn(vmimName, 'Running');
    await migrationFields('vm-m', { completed: true, endTimestamp: new Date().toISOString(), targetNodeDomainDetected: true, targetNodeDomainReadyTimestamp: new Date().toISOString() });
    const done = await vmimIn(vmimName, 'Succeeded');
    assert.deepEqual(done.status?.phaseTransitionTimestamps?.map((t) => t.phase), ['Pending', 'Scheduling', 'Scheduled', 'PreparingTarget', 'TargetReady', 'Running', 'Succeeded']);
    // The finalizer comes off in the sync's last write, after the status that says Succeeded.
    await eventually(async () => ((await vmim(vmimName))?.metadata.finalizers ?? []).length === 0 || undefined, { what: 'migration finalizer removed', ...DEADLINE });
    const moved = await eventually(async () => {
      const v = await vmi('vm-m');
      return v?.metadata.labels?.['kubevirt.io/nodeName'] === 'node-b' ? v : undefined;
    }, { what: 'node label moved', ...DEADLINE });
    assert.equal(moved.status?.nodeName, 'node-b');
    assert.equal(moved.metadata.labels?.['kubevirt.io/migrationTargetNodeName'], undefined);
    assert.equal(moved.status?.migrationState?.targetNodeAddress, '10.1.0.2', 'the handlers\' fields are kept');
    assert.deepEqual(await events(vmimName, 'VirtualMachineInstanceMigration'), ['Normal SuccessfulCreate', 'Normal Migrating', 'Normal Migrated']);
    assert.deepEqual((await events('vm-m', 'VirtualMachineInstance')).filter((e) => /Migrat/.test(e)), ['Normal Migrating', 'Normal Migrated']);
    const listed = await kubectl(tb.kubeconfigPath, ['get', 'vmim', vmimName]);
    assert.match(listed.stdout, new RegExp(`${vmimName}\\s+Succeeded\\s+vm-m`));

    // The source's launcher ends; the VMI stays Running: it follows the pod on node-b now.
    await podPhase(source?.metadata?.name ?? '', 'Succeeded');
    await migrationFields('vm-m', {});
    assert.equal((await vmi('vm-m'))?.status?.phase, 'Running');

    // And back to node-a, where the finished source pod must not repel the new target.
    const back = await migrateAndStartTarget('vm-m', uid, 'node-a');
    await migrationFields('vm-m', { targetNodeAddress: '10.1.0.1' });
    await migrationFields('vm-m', { startTimestamp: new Date().toISOString() });
    await migrationFields('vm-m', { completed: true, targetNodeDomainDetected: true });
    await vmimIn(back.vmimName, 'Succeeded');
    await eventually(async () => ((await vmi('vm-m'))?.metadata.labels?.['kubevirt.io/nodeName'] === 'node-a' ? true : undefined), { what: 'back on node-a', ...DEADLINE });
    await custom.deleteNamespacedCustomObject({ ...VMI_API, name: 'vm-m' });
  });

  test('refused: a VMI that is not live migratable (podvirtctl says why; a VMIM made anyway fails with the reason)', async () => {
    const uid = await runningVmi('vm-bridge', false);
    const refused = await ctl(['migrate', 'vmi', 'vm-bridge']);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /^error: VMI default\/vm-bridge is not live migratable: InterfaceNotLiveMigratable/);
    await custom.createNamespacedCustomObject({ ...VMIM_API, body: { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstanceMigration', metadata: { name: 'mig-bridge' }, spec: { vmiName: 'vm-bridge' } } });
    const failed = await vmimIn('mig-bridge', 'Failed');
    const condition = failed.status?.conditions?.find((c) => c.type === 'MigrationRejected');
    assert.equal(condition?.reason, 'NotLiveMigratable');
    assert.match(condition?.message ?? '', /InterfaceNotLiveMigratable: cannot migrate VMI which does not use masquerade/);
    assert.deepEqual(await events('mig-bridge', 'VirtualMachineInstanceMigration'), ['Warning MigrationFailed']);
    assert.equal((await pods(uid)).length, 1, 'no target pod was made');
    await custom.deleteNamespacedCustomObject({ ...VMI_API, name: 'vm-bridge' });
  });

  test('the target pod fails to start: Failed with the reason, the target pod deleted, the VMI stays on node-a', async () => {
    const uid = await runningVmi('vm-tf');
    const created = await ctl(['migrate', 'vmi', 'vm-tf']);
    const name = created.stdout.trim();
    const m = await vmimIn(name, 'Scheduling');
    const target = await eventually(async () => (await pods(uid)).find((p) => p.metadata?.labels?.['kubevirt.io/migrationJobUID'] === m.metadata.uid && p.spec?.nodeName !== undefined), { what: 'target bound', ...DEADLINE });
    await podPhase(target.metadata?.name ?? '', 'Failed');
    const failed = await vmimIn(name, 'Failed');
    assert.match(failed.status?.migrationState?.failureReason ?? '', /the target pod .* has terminated \(compute: Error, exit code 1\)/);
    await eventually(async () => ((await pods(uid)).find((p) => p.metadata?.name === target.metadata?.name)?.metadata?.deletionTimestamp !== undefined || (await pods(uid)).length === 1 ? true : undefined), { what: 'target pod deleted', ...DEADLINE });
    const v = await vmi('vm-tf');
    assert.equal(v?.status?.nodeName, 'node-a');
    assert.equal(v?.status?.phase, 'Running');
    assert.ok((await events('vm-tf', 'VirtualMachineInstance')).includes('Warning MigrationFailed'));
    await custom.deleteNamespacedCustomObject({ ...VMI_API, name: 'vm-tf' });
  });

  test('cancelled: before the source starts it fails at once; after, the source is asked to abort and the migration ends when it has', async () => {
    const uid = await runningVmi('vm-c');
    const first = await migrateAndStartTarget('vm-c', uid, 'node-b');
    const cancelled = await ctl(['migrate-cancel', 'vmi', 'vm-c']);
    assert.equal(cancelled.stdout.trim(), first.vmimName);
    await eventually(async () => ((await vmim(first.vmimName)) === undefined ? true : undefined), { what: 'cancelled migration gone', ...DEADLINE });
    const ended = (await vmi('vm-c'))?.status?.migrationState;
    assert.equal(ended?.failed, true);
    assert.equal(ended?.abortRequested, true);
    assert.equal((await vmi('vm-c'))?.metadata.labels?.['kubevirt.io/migrationTargetNodeName'], undefined);

    const second = await migrateAndStartTarget('vm-c', uid, 'node-b');
    await migrationFields('vm-c', { targetNodeAddress: '10.1.0.2' });
    await migrationFields('vm-c', { startTimestamp: new Date().toISOString() });
    await vmimIn(second.vmimName, 'Running');
    await custom.deleteNamespacedCustomObject({ ...VMIM_API, name: second.vmimName });
    await eventually(async () => ((await vmi('vm-c'))?.status?.migrationState?.abortRequested === true ? true : undefined), { what: 'abortRequested', ...DEADLINE });
    assert.equal((await vmim(second.vmimName))?.status?.phase, 'Running', 'held by its finalizer until the source answers');
    await migrationFields('vm-c', { abortStatus: 'Succeeded', failed: true, completed: true, failureReason: 'Migration cancelled', endTimestamp: new Date().toISOString() });
    await eventually(async () => ((await vmim(second.vmimName)) === undefined ? true : undefined), { what: 'aborted migration gone', ...DEADLINE });
    assert.equal((await vmi('vm-c'))?.status?.nodeName, 'node-a');
    assert.ok((await events(second.vmimName, 'VirtualMachineInstanceMigration')).includes('Warning MigrationFailed'));
    await custom.deleteNamespacedCustomObject({ ...VMI_API, name: 'vm-c' });
  });

  test('the VMI deleted during a migration: the migration fails and its target pod goes', async () => {
    const uid = await runningVmi('vm-d');
    const { vmimName, target } = await migrateAndStartTarget('vm-d', uid, 'node-b');
    await custom.deleteNamespacedCustomObject({ ...VMI_API, name: 'vm-d' });
    const failed = await vmimIn(vmimName, 'Failed');
    assert.match(failed.status?.migrationState?.failureReason ?? '', /was deleted during the migration/);
    await eventually(async () => {
      const left = (await pods(uid)).find((p) => p.metadata?.name === target.metadata?.name);
      return left === undefined || left.metadata?.deletionTimestamp !== undefined ? true : undefined;
    }, { what: 'target pod deleted', ...DEADLINE });
  });
});
