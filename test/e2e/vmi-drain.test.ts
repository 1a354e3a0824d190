// A node drain as a platform team runs it, on the two-node testbed with every real piece:
// kube-apiserver's eviction API calling podvirt-api's pods/eviction webhook, podvirt-controller's
// evacuation, both handlers and real guests. Three VMIs on one node (LiveMigrate,
// LiveMigrateIfPossible, None); `kubectl drain NODE --ignore-daemonsets --delete-emptydir-data`
// finishes; the two migratable guests run on the other node with the same boot_id, each moved by
// exactly one migration, and the third was shut down gracefully; nothing is left on the drained
// node; `kubectl uncordon` and a new VMI runs there again.
// Only on the real control plane (PODVIRT_TESTBED_CONTROL_PLANE=real): the in-repo API server
// serves no pods/eviction subresource and calls no webhooks yet.
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { describe, test } from 'node:test';
import type { VirtualMachineInstance, VirtualMachineInstanceMigration } from '@podvirt/api';
import { DemoShell } from '../testbed/demo/demo-shell.js';
import { repoRoot } from '../testbed/guest/repo-root.js';
import { controlPlaneFromEnv, guestVmi, NS, VmiSuite } from './vmi-stack.js';
import type { KubectlResult } from './testbed-helpers.js';

const BOOT_ID = /boot_id\s*\r?\n([0-9a-f-]{36})/;
/** Two migrations under TCG on a shared machine, each retried by kubectl every 5 s: generous. */
const DRAIN_TIMEOUT_MS = 600_000;
const EVACUATION_ANNOTATION = 'kubevirt.io/evacuationMigration';
const REAL = controlPlaneFromEnv().controlPlane === 'real';
const SKIP = REAL ? false : 'the in-repo API server serves no pods/eviction and calls no webhooks yet (run with PODVIRT_TESTBED_CONTROL_PLANE=real)';

describe('kubectl drain of a node holding three VMIs (LiveMigrate, LiveMigrateIfPossible, None)', { skip: SKIP }, () => {
  const suite = VmiSuite.setUp({ stack: { nodes: 2 } });
  const quiet = { step: () => undefined, detail: () => undefined };

  const socketOf = (nodeName: string): string => suite.stack.nodes.find((x) => x.nodeName === nodeName)?.nodeApiSocket ?? assert.fail(`no node ${nodeName}`);
  const bootId = async (name: string, nodeName: string): Promise<string> => {
    const shell = new DemoShell({ out: quiet, env: process.env, node: process.execPath, repoRoot: repoRoot(import.meta.url), kubeconfig: suite.stack.kubeconfigPath, nodeApiSocket: socketOf(nodeName) });
    return BOOT_ID.exec(await shell.console(name, 'cat /proc/sys/kernel/random/boot_id', BOOT_ID))?.[1] ?? assert.fail('no boot_id on the console');
  };
  /** kubectl with a bound of our own: a drain outlasts the helper's 60 s. */
  const kubectlLong = (args: string[], timeoutMs: number): Promise<KubectlResult> =>
    new Promise((resolve) => {
      const binary = suite.stack.testbed.controlPlane?.binaries.kubectl ?? 'kubectl';
      execFile(binary, ['--kubeconfig', suite.stack.kubeconfigPath, ...args], { timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
        resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : 1, stdout, stderr: err !== null && typeof err.code !== 'number' ? `${stderr}${err.message}` : stderr });
      });
    });
  const migrationsOf = async (name: string): Promise<VirtualMachineInstanceMigration[]> => {
    const list = (await suite.custom.listNamespacedCustomObject({ group: 'kubevirt.io', version: 'v1', namespace: NS, plural: 'virtualmachineinstancemigrations' })) as { items: VirtualMachineInstanceMigration[] };
    return list.items.filter((m) => m.spec.vmiName === name);
  };
  const withStrategy = (name: string, strategy: string): Record<string, unknown> => {
    const manifest = guestVmi(suite.guest, name);
    (manifest['spec'] as Record<string, unknown>)['evictionStrategy'] = strategy;
    return manifest;
  };
  const migratable = (name: string): Promise<VirtualMachineInstance> =>
    suite.eventually(`${name} LiveMigratable`, async () => {
      const v = await suite.vmi(name);
      return v?.status?.conditions?.some((c) => c.type === 'LiveMigratable' && c.status === 'True') === true ? v : undefined;
    });

  test('the drain finishes; two guests moved with their boot, one migration each; the third shut down gracefully; uncordon and a VMI runs there again', async () => {
    const [a, b] = suite.stack.nodes.map((n) => n.nodeName);
    assert.ok(a !== undefined && b !== undefined);
    // All three on node a: b is cordoned while they are placed.
    assert.equal((await suite.kubectl(['cordon', b])).code, 0);
    const names = { live: 'drain-live', ifPossible: 'drain-if-possible', none: 'drain-none' };
    await suite.apply(withStrategy(names.live, 'LiveMigrate'), withStrategy(names.ifPossible, 'LiveMigrateIfPossible'), withStrategy(names.none, 'None'));
    const vmis = [];
    for (const name of Object.values(names)) {
      await suite.waitForPhase(name, 'Running');
      const vmi = await migratable(name);
      assert.equal(vmi.status?.nodeName, a, `${name} runs on ${a}`);
      await suite.waitForGuestReady(vmi);
      vmis.push(vmi);
    }
    const before = { live: await bootId(names.live, a), ifPossible: await bootId(names.ifPossible, a) };
    assert.equal((await suite.kubectl(['uncordon', b])).code, 0);

    const started = performance.now();
    const drain = await kubectlLong(['drain', a, '--ignore-daemonsets', '--delete-emptydir-data', `--timeout=${DRAIN_TIMEOUT_MS / 1000 - 30}s`], DRAIN_TIMEOUT_MS);
    const drainSeconds = (performance.now() - started) / 1000;
    assert.equal(drain.code, 0, `kubectl drain: ${drain.stderr}\n${drain.stdout}\n${suite.diagnostics()}`);
    assert.match(drain.stdout, new RegExp(`node/${a} drained`));
    // kubectl says why it retried: the webhook's refusal of each migratable VMI's eviction.
    assert.match(drain.stderr, /Eviction triggered evacuation of VMI "default\/drain-live"/);
    assert.doesNotMatch(drain.stderr, /drain-none.*Eviction triggered/);
    console.log(`# drain of ${a} with 3 VMIs (2 migrated): ${drainSeconds.toFixed(1)} s`);

    for (const key of ['live', 'ifPossible'] as const) {
      const name = names[key];
      const moved = await suite.eventually(`${name} on ${b}, mark cleared`, async () => {
        const v = await suite.vmi(name);
        return v?.status?.phase === 'Running' && v.status.nodeName === b && v.status.evacuationNodeName === undefined ? v : undefined;
      });
      assert.equal(await bootId(name, b), before[key], `${name}: the guest did not reboot`);
      const migrations = await migrationsOf(name);
      assert.equal(migrations.length, 1, `${name}: exactly one migration`);
      assert.equal(migrations[0]?.metadata.annotations?.[EVACUATION_ANNOTATION], a);
      assert.equal(migrations[0]?.status?.phase, 'Succeeded');
      assert.equal((await suite.qemuPids(name)).length, 1, `${name}: one qemu`);
      const reasons = (await suite.events(name)).map((e) => e.reason);
      assert.ok(reasons.includes('SuccessfulCreateVirtualMachineInstanceMigration'), reasons.join(','));
      assert.ok(reasons.includes('Migrated'), reasons.join(','));
      const pods = await suite.podsOf(moved);
      assert.ok(pods.every((p) => p.spec?.nodeName === b || p.status?.phase === 'Succeeded'), 'nothing of it runs on the drained node');
    }

    // None: the eviction went through; the launcher's SIGTERM asked the guest to power off (ACPI),
    // so the VMI ends Succeeded with the Normal `Stopped` of a shut-down guest, not a crash.
    const none = await suite.eventually(`${names.none} ended`, async () => {
      const v = await suite.vmi(names.none);
      return v?.status?.phase === 'Succeeded' || v?.status?.phase === 'Failed' ? v : undefined;
    });
    assert.equal(none.status?.phase, 'Succeeded', JSON.stringify(none.status));
    const stopped = (await suite.events(names.none)).filter((e) => e.reason === 'Stopped').map((e) => `${e.type ?? ''} ${e.message ?? ''}`);
    assert.deepEqual(stopped, ['Normal The VirtualMachineInstance was shut down.']);
    assert.deepEqual(await migrationsOf(names.none), []);
    assert.deepEqual(await suite.qemuPids(names.none), []);

    const onA = (await suite.core.listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${a}`, labelSelector: 'kubevirt.io=virt-launcher' })).items;
    assert.deepEqual(onA.filter((p) => p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed').map((p) => p.metadata?.name), [], 'no launcher left running on the drained node');

    assert.equal((await suite.kubectl(['uncordon', a])).code, 0);
    const back = guestVmi(suite.guest, 'drain-back');
    (back['spec'] as Record<string, unknown>)['nodeSelector'] = { 'kubernetes.io/hostname': a };
    await suite.apply(back);
    assert.equal((await suite.waitForPhase('drain-back', 'Running')).status?.nodeName, a);

    for (const name of [...Object.values(names), 'drain-back']) await suite.kubectl(['delete', 'vmi', name, '--wait=false']);
    for (const name of [...Object.values(names), 'drain-back']) await suite.waitForGone(name);
    for (const vmi of vmis) await suite.waitForPodsGone(vmi);
  });

  test('a drain cancelled mid-way (Ctrl-C while the VMI migrates) leaves no half-migrated VMI: one guest, one node, the same boot', async () => {
    const [a, b] = suite.stack.nodes.map((n) => n.nodeName);
    assert.ok(a !== undefined && b !== undefined);
    const name = 'drain-cancel';
    // Whatever the test before left: a schedulable a, a cordoned b while the VMI is placed.
    assert.equal((await suite.kubectl(['uncordon', a])).code, 0);
    assert.equal((await suite.kubectl(['cordon', b])).code, 0);
    await suite.apply(withStrategy(name, 'LiveMigrate'));
    await suite.waitForPhase(name, 'Running');
    const vmi = await migratable(name);
    assert.equal(vmi.status?.nodeName, a);
    await suite.waitForGuestReady(vmi);
    const before = await bootId(name, a);
    assert.equal((await suite.kubectl(['uncordon', b])).code, 0);

    const binary = suite.stack.testbed.controlPlane?.binaries.kubectl ?? 'kubectl';
    const drain = spawn(binary, ['--kubeconfig', suite.stack.kubeconfigPath, 'drain', a, '--ignore-daemonsets', '--delete-emptydir-data'], { stdio: 'ignore' });
    const exited = new Promise<void>((resolve) => drain.once('exit', () => resolve()));
    try {
      await suite.eventually(`${name} marked and its migration created`, async () => ((await migrationsOf(name)).length > 0 ? true : undefined), DRAIN_TIMEOUT_MS);
    } finally {
      drain.kill('SIGINT');
      await exited;
    }
    const [migration] = await migrationsOf(name);
    const ended = await suite.eventually('the migration ended', async () => {
      const m = (await migrationsOf(name)).find((x) => x.metadata.name === migration?.metadata.name);
      return m?.status?.phase === 'Succeeded' || m?.status?.phase === 'Failed' ? m : undefined;
    }, DRAIN_TIMEOUT_MS);
    const node = ended.status?.phase === 'Succeeded' ? b : a;
    const settled = await suite.eventually(`${name} Running on ${node} alone`, async () => {
      const v = await suite.vmi(name);
      const live = (await suite.podsOf(vmi)).filter((p) => p.metadata?.deletionTimestamp === undefined && p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed');
      return v?.status?.phase === 'Running' && v.status.nodeName === node && live.length === 1 && live[0]?.spec?.nodeName === node ? v : undefined;
    });
    assert.equal((await suite.qemuPids(name)).length, 1, 'one qemu');
    assert.equal(await bootId(name, node), before, 'the same guest, not rebooted');
    assert.equal((await migrationsOf(name)).length, 1, 'no second migration after the drain stopped');
    console.log(`# drain cancelled: migration ${ended.status?.phase ?? ''}, the VMI on ${settled.status?.nodeName ?? ''}`);
    // The cancelled drain left the node cordoned, as kubectl does: uncordon it.
    assert.equal((await suite.kubectl(['uncordon', a])).code, 0);
    await suite.kubectl(['delete', 'vmi', name, '--wait=false']);
    await suite.waitForGone(name);
    await suite.waitForPodsGone(vmi);
  });
});
