// Live migration as a user runs it, with every real piece: the two-node testbed, podvirt-controller,
// both podvirt-handlers with the TLS migration proxy, the launchers' private libvirt daemons and
// qemu. `podvirtctl migrate vmi NAME` moves the test guest A → B and back; its boot_id (typed
// on the serial console through the node's handler) stays the same, the VMI's nodeName and
// label follow it, the source pod ends Succeeded, Events tell the story, and a pause afterwards
// goes to the new node. Then the controller-side faults: a target pod that cannot start, a
// migration cancelled while its target starts, the VMI deleted mid-migration, a VMI that
// cannot be migrated (a cancel that reaches the source, and the handler-side faults, are in
// controller-migration.test.ts with the test as the handlers and in the handlers' own e2e). After
// each: exactly one qemu runs the guest (none after a delete) and nothing of the migration is left.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, test } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import type { VirtualMachineInstance, VirtualMachineInstanceMigration } from '@podvirt/api';
import { repoRoot } from '../testbed/guest/repo-root.js';
import { DemoShell } from '../testbed/demo/demo-shell.js';
import { readTcp } from '../testbed/index.js';
import { rbacUse, showRequest } from './rbac-audit.js';
import { allManifests } from './ship-manifests-helpers.js';
import { permission } from './ship-rbac-rules.js';
import { controlPlaneFromEnv, guestVmi, NS, VmiSuite } from './vmi-stack.js';

const run = promisify(execFile);
const CTL = fileURLToPath(new URL('../../../packages/ctl/bin/podvirtctl.js', import.meta.url));
const VMIM_API = { group: 'kubevirt.io', version: 'v1', namespace: NS, plural: 'virtualmachineinstancemigrations' };
const BOOT_ID = /boot_id\s*\r?\n([0-9a-f-]{36})/;
const MIGRATION_TIMEOUT_MS = 240_000;
/** What only a migration asks for, by ServiceAccount (the rest the one-node faults run shows). */
const MIGRATION_PERMISSIONS: Record<string, string[]> = {
  'podvirt-controller': [
    permission('kubevirt.io', 'virtualmachineinstancemigrations', 'patch'),
    permission('kubevirt.io', 'virtualmachineinstancemigrations/status', 'update'),
    permission('kubevirt.io', 'virtualmachineinstancemigrations', 'list'),
    permission('kubevirt.io', 'virtualmachineinstancemigrations', 'watch'),
    permission('', 'pods', 'create'),
    permission('', 'pods', 'delete'),
  ],
  'podvirt-handler': [
    permission('kubevirt.io', 'virtualmachineinstances/status', 'update'),
    permission('', 'nodes', 'patch'),
  ],
};
const ALL_PHASES = ['Pending', 'Scheduling', 'Scheduled', 'PreparingTarget', 'TargetReady', 'Running', 'Succeeded'];

describe('live migration on the two-node testbed (podvirtctl migrate, controller, both handlers, real VMs)', () => {
  // The stack gives each handler its migration certificates, as the DaemonSet's Secret does.
  const suite = VmiSuite.setUp({ stack: { nodes: 2 } });

  const socketOf = (nodeName: string): string => {
    const n = suite.stack.nodes.find((x) => x.nodeName === nodeName);
    if (n === undefined) throw new Error(`no node ${nodeName}`);
    return n.nodeApiSocket;
  };
  const quiet = { step: () => undefined, detail: () => undefined };
  /** The guest's boot_id, typed on its serial console with podvirtctl console through `nodeName`'s handler. */
  const onConsole = (name: string, nodeName: string, command: string, answer: RegExp): Promise<string> => {
    const shell = new DemoShell({ out: quiet, env: process.env, node: process.execPath, repoRoot: repoRoot(import.meta.url), kubeconfig: suite.stack.kubeconfigPath, nodeApiSocket: socketOf(nodeName) });
    return shell.console(name, command, answer);
  };
  const bootId = async (name: string, nodeName: string): Promise<string> => {
    const id = BOOT_ID.exec(await onConsole(name, nodeName, 'cat /proc/sys/kernel/random/boot_id', BOOT_ID))?.[1];
    return id ?? assert.fail('no boot_id on the console');
  };
  // The guest mounts its container disk (vda, ext4) on /mnt: a line written there lives in the
  // pod's overlay, which a block migration copies.
  // The typed command holds `disk-line=;`; only the answer puts a line break after it. The
  // marker counts once its own line has ended: the console may deliver it a few bytes at a time.
  const DISK_LINE = /disk-line=\r?\n([\w.-]+)\r?\n/;
  const diskLine = async (name: string, nodeName: string): Promise<string> =>
    DISK_LINE.exec(await onConsole(name, nodeName, 'echo disk-line=; cat /mnt/migration-marker', DISK_LINE))?.[1] ?? assert.fail('no disk line');
  async function ctl(args: string[], nodeName?: string): Promise<{ code: number; stdout: string; stderr: string }> {
    const env = { ...process.env, KUBECONFIG: suite.stack.kubeconfigPath, ...(nodeName === undefined ? {} : { PODVIRT_NODE_SOCKET: socketOf(nodeName) }) };
    try {
      const { stdout, stderr } = await run(process.execPath, [CTL, ...args], { env });
      return { code: 0, stdout, stderr };
    } catch (err) {
      const e = err as { code: number; stdout: string; stderr: string };
      return { code: e.code, stdout: e.stdout, stderr: e.stderr };
    }
  }
  const vmim = async (name: string): Promise<VirtualMachineInstanceMigration | undefined> =>
    (await suite.custom.getNamespacedCustomObject({ ...VMIM_API, name }).catch(() => undefined)) as VirtualMachineInstanceMigration | undefined;
  const migrationEnded = (name: string) => suite.eventually(`migration ${name} ended`, async () => {
    const m = await vmim(name);
    return m?.status?.phase === 'Succeeded' || m?.status?.phase === 'Failed' ? m : undefined;
  }, MIGRATION_TIMEOUT_MS);
  const liveTargets = async (vmi: VirtualMachineInstance, uid: string | undefined): Promise<V1Pod[]> =>
    (await suite.podsOf(vmi)).filter((p) => p.metadata?.labels?.['kubevirt.io/migrationJobUID'] === uid && p.metadata?.deletionTimestamp === undefined);

  async function runningGuest(name: string, manifest = guestVmi(suite.guest, name)): Promise<VirtualMachineInstance> {
    await suite.apply(manifest);
    await suite.waitForPhase(name, 'Running');
    const vmi = await suite.eventually(`${name} LiveMigratable`, async () => {
      const v = await suite.vmi(name);
      return v?.status?.conditions?.some((c) => c.type === 'LiveMigratable' && c.status === 'True') === true ? v : undefined;
    });
    await suite.waitForGuestReady(vmi);
    return vmi;
  }

  /** `podvirtctl migrate`, waited to its end; checks what a user sees of a successful move. */
  async function migrate(name: string, from: string): Promise<string> {
    const created = await ctl(['migrate', 'vmi', name]);
    assert.equal(created.code, 0, created.stderr);
    const vmimName = created.stdout.trim();
    const done = await migrationEnded(vmimName);
    assert.equal(done.status?.phase, 'Succeeded', `${JSON.stringify(done.status)}\n${suite.diagnostics()}`);
    assert.deepEqual(done.status?.phaseTransitionTimestamps?.map((t) => t.phase), ALL_PHASES);
    const moved = await suite.eventually('nodeName and label handed over', async () => {
      const v = await suite.vmi(name);
      return v?.status?.nodeName !== from && v?.metadata.labels?.['kubevirt.io/nodeName'] === v?.status?.nodeName ? v : undefined;
    });
    const to = moved.status?.nodeName ?? '';
    assert.equal(moved.status?.phase, 'Running');
    assert.equal(moved.status?.migrationState?.completed, true);
    assert.equal(moved.status?.migrationState?.sourceNode, from);
    assert.equal(moved.status?.migrationState?.targetNode, to);
    const source = (await suite.podsOf(moved)).find((p) => p.metadata?.name === moved.status?.migrationState?.sourcePod);
    await suite.eventually('source pod Succeeded', async () => {
      const p = (await suite.podsOf(moved)).find((x) => x.metadata?.uid === source?.metadata?.uid);
      return p === undefined || p.status?.phase === 'Succeeded' ? true : undefined;
    });
    assert.equal((await suite.qemuPids(name)).length, 1, 'exactly one qemu runs the guest');
    const listed = await suite.kubectl(['get', 'vmim', vmimName]);
    assert.match(listed.stdout, new RegExp(`${vmimName}\\s+Succeeded\\s+${name}`));
    return to;
  }

  test('A → B → A: the same boot, nodeName handed over each way, the source pod Succeeded, Events in order; a pause goes to the new node', async () => {
    const name = 'mig-vm';
    const vmi = await runningGuest(name);
    const a = vmi.status?.nodeName ?? '';
    const before = await bootId(name, a);
    const marker = `written-on-${a}`;
    await onConsole(name, a, `echo ${marker} > /mnt/migration-marker && sync; echo disk-line=; cat /mnt/migration-marker`, DISK_LINE);
    const b = await migrate(name, a);
    assert.notEqual(b, a);
    assert.equal(await bootId(name, b), before, 'the guest did not reboot');
    assert.equal(await diskLine(name, b), marker, 'the container disk moved with the guest (block migration)');
    await suite.eventually('the guest agent connected again, on the target', async () => ((await suite.vmi(name))?.status?.conditions?.some((c) => c.type === 'AgentConnected' && c.status === 'True') === true ? true : undefined));
    const reasons = (await suite.events(name)).sort((x, y) => Number(x.metadata.resourceVersion ?? 0) - Number(y.metadata.resourceVersion ?? 0)).map((e) => e.reason);
    assert.deepEqual(reasons.filter((r) => r === 'Migrating' || r === 'Migrated'), ['Migrating', 'Migrated']);
    const wide = await suite.kubectl(['get', 'vmi', name, '-o', 'wide']);
    assert.match(wide.stdout, new RegExp(`${name}\\s+\\S+\\s+Running\\s+\\S*\\s*${b}\\s+True`));

    assert.equal(await migrate(name, b), a, 'and back');
    assert.equal(await bootId(name, a), before);
    assert.equal(await diskLine(name, a), marker, 'and back');

    const paused = await ctl(['pause', 'vmi', name], a);
    assert.equal(paused.code, 0, paused.stderr);
    await suite.eventually('Paused condition', async () => ((await suite.vmi(name))?.status?.conditions?.some((c) => c.type === 'Paused' && c.status === 'True') === true ? true : undefined));
    assert.equal((await ctl(['pause', 'vmi', name], b)).code, 1, 'the old node\'s handler no longer knows it');
    assert.equal((await ctl(['unpause', 'vmi', name], a)).code, 0);

    await suite.kubectl(['delete', 'vmi', name, '--wait=false']);
    await suite.waitForGone(name);
    await suite.waitForPodsGone(vmi);
    assert.deepEqual(await suite.qemuPids(name), []);
  });

  test('the pod network: a masquerade guest answers on the target pod\'s IP after the move; the default pod bridge is not live-migratable', async () => {
    const name = 'mig-net';
    const manifest = guestVmi(suite.guest, name, { devices: { interfaces: [{ name: 'default', masquerade: {}, ports: [{ name: 'http', port: 8080 }] }] } });
    (manifest['spec'] as Record<string, unknown>)['networks'] = [{ name: 'default', pod: {} }];
    // Most KubeVirt manifests name no interface: the default is a bridge on the pod network.
    const bridged = guestVmi(suite.guest, 'mig-bridge');
    delete ((bridged['spec'] as Record<string, Record<string, Record<string, unknown>>>)['domain']?.['devices'] ?? {})['autoattachPodInterface'];
    await suite.apply(bridged);
    const vmi = await runningGuest(name, manifest);
    const a = vmi.status?.nodeName ?? '';
    const ipOf = async (): Promise<string | undefined> => (await suite.vmi(name))?.status?.interfaces?.[0]?.ipAddress;
    const ipBefore = await suite.eventually('the VMI IP', ipOf);
    const before = (await suite.eventually(`boot_id over ${ipBefore}:8080`, () => readTcp(ipBefore, 8080).catch(() => undefined))).trim();
    assert.equal(await bootId(name, a), before);

    await migrate(name, a);
    // The guest keeps 10.0.2.2; the target pod has its own IP, and the VMI shows it.
    const ipAfter = await suite.eventually('the target pod\'s IP in status', async () => {
      const ip = await ipOf();
      return ip !== undefined && ip !== ipBefore ? ip : undefined;
    });
    const after = (await suite.eventually(`boot_id over ${ipAfter}:8080`, () => readTcp(ipAfter, 8080).catch(() => undefined))).trim();
    assert.equal(after, before, 'the same guest answers on the new pod IP');

    await suite.waitForPhase('mig-bridge', 'Running');
    const refusedVmi = await suite.eventually('mig-bridge judged', async () => {
      const c = (await suite.vmi('mig-bridge'))?.status?.conditions?.find((x) => x.type === 'LiveMigratable');
      return c?.status === 'False' ? c : undefined;
    });
    assert.equal(refusedVmi.reason, 'InterfaceNotLiveMigratable');
    await suite.apply({ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstanceMigration', metadata: { name: 'mig-bridge-1', namespace: NS }, spec: { vmiName: 'mig-bridge' } });
    const rejected = await migrationEnded('mig-bridge-1');
    assert.equal(rejected.status?.phase, 'Failed');
    const rejection = rejected.status?.conditions?.find((c) => c.type === 'MigrationRejected');
    assert.equal(rejection?.reason, 'NotLiveMigratable');
    assert.match(rejection?.message ?? '', /bridge/);

    for (const n of [name, 'mig-bridge']) await suite.kubectl(['delete', 'vmi', n, '--wait=false']);
    for (const n of [name, 'mig-bridge']) await suite.waitForGone(n);
    await suite.waitForPodsGone(vmi);
    assert.deepEqual(await suite.qemuPids(name), []);
  });

  test('faults: the target pod cannot mount its volume; a migration cancelled; the VMI deleted mid-migration; a VMI that is not running refused', async () => {
    // A Secret the source pod mounted at its start, gone before the migration: the target pod
    // cannot mount it (the kubelet's FailedMount), the migration fails, the guest stays.
    const name = 'mig-fault';
    const manifest = guestVmi(suite.guest, name, { extraKernelArgs: 'podvirt.cidata=vdb' });
    const spec = manifest['spec'] as { domain: { devices: { disks: unknown[] } }; volumes: unknown[] };
    spec.domain.devices.disks.push({ name: 'cloudinitdisk', disk: { bus: 'virtio' } });
    spec.volumes.push({ name: 'cloudinitdisk', cloudInitNoCloud: { secretRef: { name: 'mig-fault-userdata' } } });
    await suite.apply({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'mig-fault-userdata', namespace: NS }, type: 'Opaque', stringData: { userdata: '#cloud-config\n' } });
    const vmi = await runningGuest(name, manifest);
    const a = vmi.status?.nodeName ?? '';
    const before = await bootId(name, a);
    await suite.kubectl(['delete', 'secret', 'mig-fault-userdata']);
    const failedName = (await ctl(['migrate', 'vmi', name])).stdout.trim();
    const failed = await migrationEnded(failedName);
    assert.equal(failed.status?.phase, 'Failed');
    assert.match(failed.status?.migrationState?.failureReason ?? '', /target pod .* cannot start: FailedMount/);
    await suite.eventually('target pod gone', async () => ((await liveTargets(vmi, failed.metadata.uid)).length === 0 ? true : undefined));
    assert.equal((await suite.vmi(name))?.status?.nodeName, a);
    assert.equal((await suite.vmi(name))?.status?.phase, 'Running');
    assert.equal((await suite.qemuPids(name)).length, 1);
    assert.equal(await bootId(name, a), before);
    await suite.apply({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'mig-fault-userdata', namespace: NS }, type: 'Opaque', stringData: { userdata: '#cloud-config\n' } });

    // Cancelled while its target pod starts (the source's abort is the handlers' and has its
    // own tests): the migration goes, so does the target pod, the guest stays where it was.
    const started = await ctl(['migrate', 'vmi', name]);
    assert.equal(started.code, 0, started.stderr);
    const cancelName = started.stdout.trim();
    const cancel = await ctl(['migrate-cancel', 'vmi', name]);
    assert.equal(cancel.code, 0, cancel.stderr);
    assert.equal(cancel.stdout.trim(), cancelName);
    await suite.eventually('cancelled migration gone', async () => ((await vmim(cancelName)) === undefined ? true : undefined), MIGRATION_TIMEOUT_MS);
    await suite.eventually('no target pod left', async () => ((await suite.podsOf(vmi)).every((p) => p.metadata?.labels?.['kubevirt.io/migrationJobUID'] === undefined || p.metadata.deletionTimestamp !== undefined || p.status?.phase === 'Failed' || p.status?.phase === 'Succeeded') ? true : undefined));
    const after = await suite.vmi(name);
    assert.equal(after?.status?.phase, 'Running');
    assert.equal(after?.status?.nodeName, a);
    await suite.eventually('one qemu', async () => ((await suite.qemuPids(name)).length === 1 ? true : undefined));
    assert.equal(await bootId(name, a), before);

    // The VMI deleted during a migration: the migration fails, both pods go, no qemu is left.
    const third = await ctl(['migrate', 'vmi', name]);
    assert.equal(third.code, 0, third.stderr);
    const doomedName = third.stdout.trim();
    await suite.eventually('target pod created', async () => ((await vmim(doomedName))?.status?.phase === 'Scheduling' ? true : undefined), MIGRATION_TIMEOUT_MS);
    await suite.kubectl(['delete', 'vmi', name, '--wait=false']);
    const doomed = await migrationEnded(doomedName);
    assert.equal(doomed.status?.phase, 'Failed');
    assert.match(doomed.status?.migrationState?.failureReason ?? '', /deleted/);
    await suite.waitForGone(name);
    await suite.waitForPodsGone(vmi);
    assert.deepEqual(await suite.qemuPids(name), []);

    // A VMI that never runs (pinned to no node): podvirtctl refuses it, and so does the controller.
    const stuck = guestVmi(suite.guest, 'mig-stuck');
    (stuck['spec'] as Record<string, unknown>)['nodeSelector'] = { 'kubernetes.io/hostname': 'no-such-node' };
    await suite.apply(stuck);
    await suite.waitForPhase('mig-stuck', 'Scheduling');
    const refused = await ctl(['migrate', 'vmi', 'mig-stuck']);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /VMI default\/mig-stuck is Scheduling, not Running/);
    await suite.apply({ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstanceMigration', metadata: { name: 'mig-stuck-1', namespace: NS }, spec: { vmiName: 'mig-stuck' } });
    const rejected = await migrationEnded('mig-stuck-1');
    assert.equal(rejected.status?.conditions?.find((c) => c.type === 'MigrationRejected')?.reason, 'VMINotRunning');
    await suite.kubectl(['delete', 'vmi', 'mig-stuck', '--wait=false']);
    await suite.waitForGone('mig-stuck');
  });

  // On the real lane (scripts/test's real-control-plane pass) kube-apiserver authorised every call
  // above with the ServiceAccounts' tokens: its audit log shows each migration verb of the
  // controller's and the handler's ClusterRoles used (real-control-plane-faults, one node, cannot
  // reach them), nothing refused, nothing used beyond the grants.
  test('on the real control plane, RBAC from the audit log: the migrations used their verbs, none refused, none beyond the roles', { skip: controlPlaneFromEnv().controlPlane === 'real' ? false : 'the real control plane only (PODVIRT_TESTBED_CONTROL_PLANE=real)' }, async () => {
    const cp = suite.stack.testbed.controlPlane ?? assert.fail('the stack runs on the real control plane');
    const manifests = await allManifests();
    for (const [name, needed] of Object.entries(MIGRATION_PERMISSIONS)) {
      const use = await rbacUse(cp.auditLogPath, manifests, 'podvirt', name);
      assert.deepEqual(use.refused.map(showRequest), [], `${name} was refused`);
      assert.deepEqual(use.ungranted, [], `${name} used permissions its roles do not grant`);
      assert.deepEqual(needed.filter((p) => !use.used.has(p)), [], `${name} never used these during the migrations`);
    }
  });
});

// The progress timeout lives in the source node's handler and libvirt alone: the control plane
// sees only the migration's end, as in the suites above. So this suite runs on the in-repo lane
// only; the real pass keeps its 66 s.
describe('a live migration that cannot converge (handlers with a 4 MiB/s limit and a 5 s progress timeout, the guest dirtying memory)', {
  skip: controlPlaneFromEnv().controlPlane === 'real' ? 'the in-repo lane only: nothing of it reaches the control plane but the migration\'s end' : false,
}, () => {
  const suite = VmiSuite.setUp({ stack: { nodes: 2, handlerArgs: ['--migration-bandwidth', '4', '--migration-progress-timeout', '5s'] } });

  test('the progress timeout aborts it: the migration Failed with the reason, the guest runs on, unmoved, one qemu, no target pod', async () => {
    const name = 'mig-dirty';
    await suite.apply(guestVmi(suite.guest, name, { extraKernelArgs: 'podvirt.dirty=48' }));
    const vmi = await suite.waitForPhase(name, 'Running');
    await suite.waitForGuestReady(vmi);
    await suite.eventually(`${name} LiveMigratable`, async () => ((await suite.vmi(name))?.status?.conditions?.some((c) => c.type === 'LiveMigratable' && c.status === 'True') === true ? true : undefined));
    const a = vmi.status?.nodeName ?? '';
    await suite.apply({ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstanceMigration', metadata: { name: 'mig-dirty-1', namespace: NS }, spec: { vmiName: name } });
    const ended = await suite.eventually('the migration ended', async () => {
      const m = (await suite.custom.getNamespacedCustomObject({ ...VMIM_API, name: 'mig-dirty-1' })) as VirtualMachineInstanceMigration;
      return m.status?.phase === 'Succeeded' || m.status?.phase === 'Failed' ? m : undefined;
    }, MIGRATION_TIMEOUT_MS);
    assert.equal(ended.status?.phase, 'Failed', JSON.stringify(ended.status));
    const after = await suite.vmi(name);
    assert.match(after?.status?.migrationState?.failureReason ?? '', /progress timeout/, JSON.stringify(after?.status?.migrationState));
    assert.equal(after?.status?.migrationState?.failed, true);
    assert.equal(after?.status?.phase, 'Running');
    assert.equal(after?.status?.nodeName, a);
    // An Event is recorded after the status write it explains (the recorder sends it on its own).
    await suite.eventually('a MigrationFailed Event', async () => ((await suite.events(name)).some((e) => e.reason === 'MigrationFailed') ? true : undefined));
    await suite.eventually('no target pod left', async () => ((await suite.podsOf(vmi)).filter((p) => p.metadata?.labels?.['kubevirt.io/migrationJobUID'] !== undefined && p.metadata.deletionTimestamp === undefined && p.status?.phase !== 'Failed' && p.status?.phase !== 'Succeeded').length === 0 ? true : undefined));
    await suite.eventually('exactly one qemu', async () => ((await suite.qemuPids(name)).length === 1 ? true : undefined));
    await suite.kubectl(['delete', 'vmi', name, '--wait=false']);
    await suite.waitForGone(name);
    await suite.waitForPodsGone(vmi);
    assert.deepEqual(await suite.qemuPids(name), []);
  });
});
