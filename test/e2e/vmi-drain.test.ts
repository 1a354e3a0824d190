// A node drain as a platform team runs it, on the two-node testbed with every real piece:
// kube-apiserver's eviction API calling podvirt-api's pods/eviction webhook, podvirt-controller's
// evacuation, both handlers and real guests. Three VMIs on one node (LiveMigrate,
// LiveMigrateIfPossible, None); `kubectl drain NODE --ignore-daemonsets --delete-emptydir-data`
// finishes; the two migratable guests run on the other node with the same boot_id, each moved by
// exactly one migration, and the third was shut down gracefully; nothing is left on the drained
// node; `kubectl uncordon` and a new VMI runs there again.
// On both control planes: the in-repo API server serves pods/eviction, PodDisruptionBudgets and
// calls podvirt-api's webhooks as kube-apiserver does.
// Faults, on the same stack: the only other node cordoned while the drain runs (the migration
// fails cleanly, the drain's 429 says why and when the next try is, and once the node is
// schedulable again the next migration takes the VMI there), and podvirt-controller SIGKILLed
// mid-drain and started again (one migration, the drain finishes); the VMI's writes during each
// fault are counted. The faults run on the real control plane only (its scheduler's answer for a
// cordoned node, kube-apiserver's eviction retries): about a minute the main pass saves.
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { describe, test } from 'node:test';
import type { VirtualMachineInstance, VirtualMachineInstanceMigration } from '@podvirt/api';
import { DemoShell } from '../testbed/demo/demo-shell.js';
import { StackProcess } from '../testbed/index.js';
import { repoRoot } from '../testbed/guest/repo-root.js';
import { controlPlaneFromEnv, guestVmi, NS, VmiSuite } from './vmi-stack.js';
import type { KubectlResult } from './testbed-helpers.js';

const BOOT_ID = /boot_id\s*\r?\n([0-9a-f-]{36})/;
/** Two migrations under TCG on a shared machine, each retried by kubectl every 5 s: generous. */
const DRAIN_TIMEOUT_MS = 600_000;
const EVACUATION_ANNOTATION = 'kubevirt.io/evacuationMigration';
/** KubeVirt waits 5 min for a target pod no node takes; shortened so the cordoned-target fault fits. */
const CONTROLLER_ARGS = ['--migration-unschedulable-timeout', '10s'];
// The VMI's writes (status included) in one fault: 12 measured for each (a failed migration and a
// second that moved it; a migration across a controller restart); a retry loop writes hundreds.
const MAX_WRITES_PER_FAULT = 30;

describe('kubectl drain of a node holding three VMIs (LiveMigrate, LiveMigrateIfPossible, None)', () => {
  /** The controller started again after its SIGKILL (stopped by the suite's close). */
  let restarted: StackProcess | undefined;
  const suite = VmiSuite.setUp({ stack: { nodes: 2, controllerArgs: CONTROLLER_ARGS }, beforeClose: async () => void (await restarted?.stop()) });
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

  /** `kubectl drain NODE` in the background: its output so far and its exit. */
  const startDrain = (node: string): { output: () => string; exited: Promise<number | null>; stop: () => void } => {
    const binary = suite.stack.testbed.controlPlane?.binaries.kubectl ?? 'kubectl';
    const drain = spawn(binary, ['--kubeconfig', suite.stack.kubeconfigPath, 'drain', node, '--ignore-daemonsets', '--delete-emptydir-data', `--timeout=${DRAIN_TIMEOUT_MS / 1000 - 30}s`], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    drain.stdout.on('data', (d: Buffer) => (output += d.toString()));
    drain.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const exited = new Promise<number | null>((resolve) => drain.once('exit', (code) => resolve(code)));
    return { output: () => output, exited, stop: () => void drain.kill('SIGINT') };
  };
  /** The VMI runs on `node` alone: Running there, one live launcher pod, on that node. */
  const aloneOn = (vmi: VirtualMachineInstance, node: string, what: string): Promise<VirtualMachineInstance> =>
    suite.eventually(`${what}: ${vmi.metadata.name ?? ''} Running on ${node} alone`, async () => {
      const v = await suite.vmi(vmi.metadata.name ?? '');
      const live = (await suite.podsOf(vmi)).filter((p) => p.metadata?.deletionTimestamp === undefined && p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed');
      return v?.status?.phase === 'Running' && v.status.nodeName === node && live.length === 1 && live[0]?.spec?.nodeName === node ? v : undefined;
    });

  /** A LiveMigrate VMI placed on `a` (b cordoned meanwhile, left cordoned), migratable, its guest up: and its boot_id. */
  const placedOn = async (name: string, a: string, b: string): Promise<{ vmi: VirtualMachineInstance; boot: string }> => {
    // Whatever the test before left: a schedulable a, a cordoned b while the VMI is placed.
    assert.equal((await suite.kubectl(['uncordon', a])).code, 0);
    assert.equal((await suite.kubectl(['cordon', b])).code, 0);
    await suite.apply(withStrategy(name, 'LiveMigrate'));
    await suite.waitForPhase(name, 'Running');
    const vmi = await migratable(name);
    assert.equal(vmi.status?.nodeName, a);
    await suite.waitForGuestReady(vmi);
    return { vmi, boot: await bootId(name, a) };
  };

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
    const { vmi, boot: before } = await placedOn(name, a, b);
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
    const settled = await aloneOn(vmi, node, 'the drain cancelled');
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

  test('faults mid-drain: the target node cordoned (the migration fails cleanly, the 429 says why, the next one moves the VMI once the node is back), then the controller SIGKILLed (one migration, the drain finishes)', {
    skip: controlPlaneFromEnv().controlPlane === 'real' ? false : 'the real control plane only (PODVIRT_TESTBED_CONTROL_PLANE=real)',
  }, async () => {
    const [a, b] = suite.stack.nodes.map((n) => n.nodeName);
    assert.ok(a !== undefined && b !== undefined);
    const name = 'drain-fault';
    const bounds: string[] = [];
    const { vmi, boot } = await placedOn(name, a, b);

    // 1. b stays cordoned: the drain of a has nowhere to send the VMI.
    let writes = suite.versionsSeen(name);
    const first = startDrain(a);
    try {
      const failed = await suite.eventually('the evacuation migration failed: no node takes its target pod', async () => {
        const m = (await migrationsOf(name))[0];
        return m?.status?.phase === 'Failed' ? m : undefined;
      }, DRAIN_TIMEOUT_MS);
      assert.match(failed.status?.migrationState?.failureReason ?? '', /no node can take the target pod/, JSON.stringify(failed.status));
      assert.equal(failed.metadata.annotations?.[EVACUATION_ANNOTATION], a);
      // Nothing half-migrated: the VMI whole on a, its target pod gone, still marked for the drain.
      const whole = await aloneOn(vmi, a, 'after the failed migration');
      assert.equal(whole.status?.evacuationNodeName, a, 'still marked: the drain goes on asking');
      assert.equal((await suite.qemuPids(name)).length, 1, 'one qemu');
      // kubectl drain prints each refusal: it names the failure and when the controller tries again.
      const said = await suite.eventually('the drain printed why', () => Promise.resolve(/failed \(no node can take the target pod[^\n]*\); podvirt-controller tries again in \d+ s/.exec(first.output())?.[0]), 60_000);
      console.log(`# the 429 as kubectl drain printed it: ...${said}`);
      assert.equal((await migrationsOf(name)).length, 1, 'no second migration within the backoff');
      // b schedulable again: after the backoff the next migration takes the VMI there; the drain ends.
      assert.equal((await suite.kubectl(['uncordon', b])).code, 0);
      assert.equal(await first.exited, 0, `kubectl drain:\n${first.output()}\n${suite.diagnostics()}`);
    } finally {
      first.stop();
    }
    assert.match(first.output(), new RegExp(`node/${a} drained`));
    await aloneOn(vmi, b, 'after the drain');
    const afterCordon = await migrationsOf(name);
    assert.deepEqual(afterCordon.map((m) => m.status?.phase).sort(), ['Failed', 'Succeeded'], 'one failed migration, then one that moved it');
    assert.equal(await bootId(name, b), boot, 'the same guest, not rebooted');
    bounds.push(`target cordoned: ${suite.versionsSeen(name) - writes} writes`);

    // 2. The drain of b; podvirt-controller SIGKILLed as soon as the evacuation's migration exists.
    assert.equal((await suite.kubectl(['uncordon', a])).code, 0);
    writes = suite.versionsSeen(name);
    const before = new Set(afterCordon.map((m) => m.metadata.name));
    const second = startDrain(b);
    try {
      const made = await suite.eventually('the evacuation migration created', async () => (await migrationsOf(name)).find((m) => !before.has(m.metadata.name)), DRAIN_TIMEOUT_MS);
      suite.stack.controller.kill('SIGKILL');
      assert.equal((await suite.stack.controller.exited).signal, 'SIGKILL');
      console.log(`# controller killed with migration ${made.metadata.name ?? ''} ${made.status?.phase ?? 'Pending'}`);
      const command = suite.stack.controllerCommand;
      restarted = new StackProcess({ name: 'controller', argv: [...command.argv, ...CONTROLLER_ARGS], env: { ...process.env, ...command.env } });
      const again = restarted;
      await suite.eventually('controller started again', () => Promise.resolve(again.lines.some((l) => l.msg === 'controller started') ? true : undefined), 60_000);
      assert.equal(await second.exited, 0, `kubectl drain:\n${second.output()}\n${suite.diagnostics()}`);
    } finally {
      second.stop();
    }
    assert.match(second.output(), new RegExp(`node/${b} drained`));
    const moved = await aloneOn(vmi, a, 'after the drain with the controller restarted');
    assert.equal(moved.status?.evacuationNodeName, undefined, 'the mark cleared');
    const made = (await migrationsOf(name)).filter((m) => !before.has(m.metadata.name));
    assert.deepEqual(made.map((m) => m.status?.phase), ['Succeeded'], 'exactly one migration for the drain across the restart');
    assert.equal((await suite.qemuPids(name)).length, 1, 'one qemu');
    assert.equal(await bootId(name, a), boot, 'the same guest, not rebooted');
    bounds.push(`controller killed: ${suite.versionsSeen(name) - writes} writes`);
    console.log(`# drain faults: ${bounds.join('; ')}`);
    for (const line of bounds) assert.ok(Number(/(\d+) writes/.exec(line)?.[1]) <= MAX_WRITES_PER_FAULT, line);

    assert.equal((await suite.kubectl(['uncordon', b])).code, 0);
    await suite.kubectl(['delete', 'vmi', name, '--wait=false']);
    await suite.waitForGone(name);
    await suite.waitForPodsGone(vmi);
  });
});
