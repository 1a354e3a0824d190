// The handlers' part of a live migration on the two-node testbed, with the test playing the
// controller (it stops the real one once the VMI runs): it starts the target launcher pod on
// node 2, writes the VMI's migrationState and target label, and hands status.nodeName over
// when the source reports completion. Checked: the guest keeps its boot_id (read over the
// console through node 2's handler), a pause after the hand-over goes to node 2's launcher,
// the source pod ends Succeeded, exactly one qemu runs the guest.
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import type { V1Pod } from '@kubernetes/client-node';
import { MIGRATION_JOB_LABEL, MIGRATION_TARGET_NODE_LABEL, NODE_NAME_LABEL, type VirtualMachineInstance, type VmiMigrationState } from '@podvirt/api';
import { node } from '@podvirt/proto';
import { makeMigrationCertificates } from '@podvirt/test-support';
import { podvirtctl } from './handler-node.js';
import type { StackNode } from '../testbed/stack/start-podvirt-stack.js';
import { guestVmi, NS, VmiSuite } from './vmi-stack.js';

const VM = 'migrating-vm';
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/;
const MIGRATION_TIMEOUT_MS = 240_000;

/** The describe's two-node stack, both handlers on one certificate of a CA made for it (removed after). */
function twoNodeSuite(handlerArgs: readonly string[]): VmiSuite {
  let certs = '';
  return VmiSuite.setUp({
    before: async () => {
      certs = await mkdtemp(join(tmpdir(), 'podvirt-migration-certs-'));
      const [dir] = [...(await makeMigrationCertificates(certs, ['handler'])).values()];
      return { nodes: 2, handlerArgs: ['--migration-tls-dir', dir ?? '', '--migration-address', '127.0.0.1', ...handlerArgs] };
    },
    after: async () => {
      if (certs !== '') await rm(certs, { recursive: true, force: true });
    },
  });
}

/** The guest's boot_id, typed on its serial console through a node's handler (node API Console). */
async function bootIdOverConsole(socket: string): Promise<string> {
  const client = new node.NodeClient(`unix:${socket}`, grpc.credentials.createInsecure());
  const call = client.console();
  let output = '';
  try {
    return await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no boot_id on the console within 60 s:\n${output.slice(-2000)}`)), 60_000);
      call.on('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
      call.on('data', (m: node.StreamOutput) => {
        if (m.output?.$case === 'attached') call.write({ input: { $case: 'data', value: Buffer.from('\rcat /proc/sys/kernel/random/boot_id\r') } });
        if (m.output?.$case !== 'data') return;
        output += m.output.value.toString();
        // The guest's heartbeat may come between the echoed command and its answer.
        const found = new RegExp(`random/boot_id[\\s\\S]*?(${UUID.source})`).exec(output);
        if (found?.[1] !== undefined) {
          clearTimeout(timer);
          resolve(found[1]);
        }
      });
      call.write({ input: { $case: 'open', value: { vmi: { namespace: NS, name: VM }, takeover: true } } });
    });
  } finally {
    call.cancel();
    client.close();
  }
}

/** The launcher process (not its monitor) of the pod `podName`: its environment names the pod. */
async function launcherPidOfPod(podName: string): Promise<number | undefined> {
  for (const pid of await readdir('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    const argv = (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).split('\0');
    if (!argv.some((a) => a.endsWith('/podvirt-launcher.js'))) continue;
    const env = (await readFile(`/proc/${pid}/environ`, 'utf8').catch(() => '')).split('\0');
    if (env.includes(`POD_NAME=${podName}`)) return Number(pid);
  }
  return undefined;
}

/** The test as the controller: the pieces of a migration it writes. */
class PlayedController {
  constructor(readonly suite: VmiSuite) {}

  async vmi(): Promise<VirtualMachineInstance> {
    return (await this.suite.vmi(VM)) ?? assert.fail('the VMI vanished');
  }

  async ms(): Promise<VmiMigrationState> {
    return (await this.vmi()).status?.migrationState ?? {};
  }

  async patchStatus(patch: Record<string, unknown>): Promise<void> {
    const out = await this.suite.kubectl(['patch', 'vmi', VM, '--subresource=status', '--type=merge', '-p', JSON.stringify({ status: patch })]);
    assert.equal(out.code, 0, out.stderr);
  }

  async label(...labels: string[]): Promise<void> {
    const out = await this.suite.kubectl(['label', 'vmi', VM, '--overwrite', ...labels]);
    assert.equal(out.code, 0, out.stderr);
  }

  pod(name: string): Promise<V1Pod> {
    return this.suite.core.readNamespacedPod({ name, namespace: NS });
  }

  /** A VMI pinned to `nodeName`, running, its guest ready; then the real controller is stopped. */
  async runOn(nodeName: string): Promise<{ vmi: VirtualMachineInstance; bootId: string }> {
    const manifest = guestVmi(this.suite.guest, VM);
    (manifest['spec'] as Record<string, unknown>)['nodeSelector'] = { 'kubernetes.io/hostname': nodeName };
    await this.suite.apply(manifest);
    const vmi = await this.suite.waitForPhase(VM, 'Running');
    const ready = await this.suite.waitForGuestReady(vmi);
    const bootId = /boot_id=(\S+)/.exec(ready)?.[1] ?? assert.fail(`no boot_id in ${ready}`);
    await this.suite.eventually('migrationMethod written', async () => ((await this.vmi()).status?.migrationMethod === 'BlockMigration' ? true : undefined));
    await this.suite.stack.controller.stop();
    return { vmi, bootId };
  }

  /** The target pod on `to` (the source pod's spec), migrationState, the target label. */
  async begin(migrationUid: string, from: StackNode, to: StackNode): Promise<{ source: string; target: string }> {
    const vmi = await this.vmi();
    const source = (await this.suite.podsOf(vmi)).find((p) => p.spec?.nodeName === from.nodeName && p.status?.phase === 'Running');
    assert.ok(source?.metadata?.name !== undefined && source.metadata.uid !== undefined && source.spec !== undefined, 'a running source pod');
    const { nodeSelector: _selector, affinity: _affinity, ...spec } = source.spec;
    const created = await this.suite.core.createNamespacedPod({
      namespace: NS,
      body: {
        metadata: {
          name: `${VM}-${migrationUid}`,
          labels: { ...source.metadata.labels, [MIGRATION_JOB_LABEL]: migrationUid },
          ...(source.metadata.ownerReferences === undefined ? {} : { ownerReferences: source.metadata.ownerReferences }),
        },
        spec: { ...spec, nodeName: to.nodeName },
      },
    });
    const target = created.metadata?.name ?? '';
    await this.suite.eventually('the target pod running', async () => ((await this.pod(target)).status?.phase === 'Running' ? true : undefined));
    // A new migration replaces the last one's state whole, as the controller writes it (null drops a key in a merge patch).
    const stale = Object.fromEntries(Object.keys(vmi.status?.migrationState ?? {}).map((k) => [k, null]));
    await this.patchStatus({
      activePods: { [source.metadata.uid]: from.nodeName, [created.metadata?.uid ?? '']: to.nodeName },
      migrationState: { ...stale, migrationUid, sourceNode: from.nodeName, sourcePod: source.metadata.name, targetNode: to.nodeName, targetPod: target },
    });
    await this.label(`${MIGRATION_TARGET_NODE_LABEL}=${to.nodeName}`);
    return { source: source.metadata.name, target };
  }

  /** What the controller does after a failed migration: the target pod goes, the label too. */
  async endFailed(target: string): Promise<void> {
    await this.suite.core.deleteNamespacedPod({ name: target, namespace: NS });
    await this.label(`${MIGRATION_TARGET_NODE_LABEL}-`);
    await this.suite.eventually('the target pod gone', async () => (await this.pod(target).then(() => undefined, () => true)), 90_000);
  }

  async waitFor(what: string, check: (m: VmiMigrationState) => boolean, timeoutMs = MIGRATION_TIMEOUT_MS): Promise<VmiMigrationState> {
    return this.suite.eventually(what, async () => {
      const m = await this.ms();
      return check(m) ? m : undefined;
    }, timeoutMs);
  }
}

describe('live migration, the handlers\' part, on the two-node testbed', () => {
  const suite = twoNodeSuite([]);

  let bootId = '';

  test('A → B: same boot_id, pause goes to B, the source pod ends Succeeded, one qemu', async () => {
    const [a, b] = suite.stack.nodes;
    assert.ok(a !== undefined && b !== undefined);
    const ctl = new PlayedController(suite);
    ({ bootId } = await ctl.runOn(a.nodeName));
    const { source } = await ctl.begin('e2e-migration', a, b);

    const endpoint = await ctl.waitFor('node 2 opened its endpoint', (m) => m.targetNodeAddress !== undefined && m.targetDirectMigrationNodePorts !== undefined, 60_000);
    assert.deepEqual(Object.values(endpoint.targetDirectMigrationNodePorts ?? {}).sort((x, y) => x - y), [0, 49152, 49153]);
    const done = await ctl.waitFor('the migration completed and node 2 saw the guest', (m) => {
      if (m.failed === true) assert.fail(`the migration failed: ${m.failureReason ?? ''}`);
      return m.completed === true && m.targetNodeDomainDetected === true;
    });
    assert.equal(done.mode, 'PreCopy');
    assert.ok(done.startTimestamp !== undefined && done.endTimestamp !== undefined && done.targetNodeDomainReadyTimestamp !== undefined);
    assert.equal((await ctl.vmi()).status?.phase, 'Running', 'the source wrote no phase for the guest that left');

    // The hand-over, as the controller writes it.
    await ctl.patchStatus({ nodeName: b.nodeName });
    await ctl.label(`${NODE_NAME_LABEL}=${b.nodeName}`, `${MIGRATION_TARGET_NODE_LABEL}-`);

    await suite.eventually('the source pod Succeeded', async () => ((await ctl.pod(source)).status?.phase === 'Succeeded' ? true : undefined), 90_000);
    const qemus = await suite.qemuPids(VM);
    assert.equal(qemus.length, 1, `one qemu runs the guest: ${qemus.join(', ')}`);
    assert.equal(await bootIdOverConsole(b.nodeApiSocket), bootId, 'the same boot: the guest never restarted');

    const paused = await podvirtctl(b.nodeApiSocket, 'pause', `${NS}/${VM}`);
    assert.equal(paused.code, 0, paused.stderr);
    await suite.eventually('Paused condition from node 2', async () =>
      ((await ctl.vmi()).status?.conditions?.some((c) => c.type === 'Paused' && c.status === 'True') === true ? true : undefined));
    const elsewhere = await podvirtctl(a.nodeApiSocket, 'unpause', `${NS}/${VM}`);
    assert.notEqual(elsewhere.code, 0, 'node 1 no longer serves the VMI');
    const unpaused = await podvirtctl(b.nodeApiSocket, 'unpause', `${NS}/${VM}`);
    assert.equal(unpaused.code, 0, unpaused.stderr);
    const vmi = await ctl.vmi();
    assert.equal(vmi.status?.phase, 'Running');
    assert.deepEqual(vmi.status?.phaseTransitionTimestamps?.map((p) => p.phase).filter((p) => p === 'Succeeded' || p === 'Failed'), []);
    assert.deepEqual(await suite.qemuPids(VM), qemus, 'the same qemu runs on');
  });

  test('then B → A with the guest paused by the user: it arrives paused, stays paused, same boot', async () => {
    const [a, b] = suite.stack.nodes;
    assert.ok(a !== undefined && b !== undefined && bootId !== '', 'runs after the A → B test');
    const ctl = new PlayedController(suite);
    const paused = await podvirtctl(b.nodeApiSocket, 'pause', `${NS}/${VM}`);
    assert.equal(paused.code, 0, paused.stderr);
    const { source } = await ctl.begin('e2e-back', b, a);
    await ctl.waitFor('the migration back completed and node 1 saw the guest', (m) => {
      if (m.failed === true) assert.fail(`the migration failed: ${m.failureReason ?? ''}`);
      return m.migrationUid === 'e2e-back' && m.completed === true && m.targetNodeDomainDetected === true;
    });
    await ctl.patchStatus({ nodeName: a.nodeName });
    await ctl.label(`${NODE_NAME_LABEL}=${a.nodeName}`, `${MIGRATION_TARGET_NODE_LABEL}-`);
    await suite.eventually('the source pod on node 2 Succeeded', async () => ((await ctl.pod(source)).status?.phase === 'Succeeded' ? true : undefined), 90_000);
    assert.equal((await suite.qemuPids(VM)).length, 1);
    const condition = (await ctl.vmi()).status?.conditions?.find((c) => c.type === 'Paused');
    assert.equal(condition?.reason, 'PausedByUser', 'still paused by the user after the hand-over');
    // Paused still: node 1's handler took it over without resuming it.
    const unpaused = await podvirtctl(a.nodeApiSocket, 'unpause', `${NS}/${VM}`);
    assert.equal(unpaused.code, 0, unpaused.stderr);
    assert.equal(await bootIdOverConsole(a.nodeApiSocket), bootId, 'the same boot after two moves');
  });
});

describe('handler-side faults during a live migration (bandwidth held at 1 MiB/s)', () => {
  const suite = twoNodeSuite(['--migration-bandwidth', '1']);

  test('target launcher killed mid-migration, then the source handler killed mid-migration: the guest stays on A, one qemu, same boot', async (t) => {
    const [a, b] = suite.stack.nodes;
    assert.ok(a !== undefined && b !== undefined);
    const ctl = new PlayedController(suite);
    const { bootId } = await ctl.runOn(a.nodeName);

    // 1. The target launcher dies while memory is being sent.
    const first = await ctl.begin('e2e-fault-1', a, b);
    await ctl.waitFor('the migration started', (m) => m.startTimestamp !== undefined, 120_000);
    const launcher = await launcherPidOfPod(first.target);
    assert.ok(launcher !== undefined, 'the target launcher runs');
    process.kill(launcher, 'SIGKILL');
    const failed = await ctl.waitFor('the source reports the failure', (m) => m.failed === true || m.completed === true);
    assert.equal(failed.completed, undefined, 'the migration cannot complete without its target');
    assert.ok((failed.failureReason ?? '') !== '', 'with a reason');
    t.diagnostic(`target launcher killed: ${failed.failureReason ?? ''}`);
    assert.equal((await ctl.vmi()).status?.phase, 'Running');
    await ctl.endFailed(first.target);
    assert.equal((await suite.qemuPids(VM)).length, 1, 'only the source qemu runs the guest');

    // 2. The source handler dies while memory is being sent (its proxy dies with it).
    const second = await ctl.begin('e2e-fault-2', a, b);
    await ctl.waitFor('the second migration started', (m) => m.startTimestamp !== undefined, 120_000);
    a.handler.kill('SIGKILL');
    await a.restartHandler();
    const ended = await ctl.waitFor('the restarted source handler reports an end', (m) => m.failed === true || m.completed === true);
    t.diagnostic(`source handler killed: ${ended.completed === true ? 'completed' : `failed: ${ended.failureReason ?? ''}`}`);
    let owner = a;
    if (ended.completed === true) {
      // The switch happened before the proxy died: the guest is at B; hand over.
      await ctl.waitFor('node 2 saw the guest', (m) => m.targetNodeDomainDetected === true);
      await ctl.patchStatus({ nodeName: b.nodeName });
      await ctl.label(`${NODE_NAME_LABEL}=${b.nodeName}`, `${MIGRATION_TARGET_NODE_LABEL}-`);
      owner = b;
    } else {
      assert.ok((ended.failureReason ?? '') !== '');
      await ctl.endFailed(second.target);
    }
    await suite.eventually('exactly one qemu runs the guest', async () => ((await suite.qemuPids(VM)).length === 1 ? true : undefined), 60_000);
    assert.equal((await ctl.vmi()).status?.phase, 'Running');
    assert.equal(await bootIdOverConsole(owner.nodeApiSocket), bootId, 'the same boot through both faults');
    const started = a.handler.lines.filter((l) => l.msg === 'starting the migration').length;
    assert.equal(started, 0, 'the restarted source handler never started a second migration');
    // Nothing is left on the node that lost: no ghost record, no proxy socket in the pod.
    const loser = owner === a ? b : a;
    assert.deepEqual(await readdir(join(loser.handlerDir, 'ghost-records')).catch(() => []), [], 'no ghost record on the node that lost');
    const sourcePod = (await suite.podsOf(await ctl.vmi())).find((p) => p.spec?.nodeName === a.nodeName);
    if (owner === a && sourcePod?.metadata?.uid !== undefined) {
      const proxyDir = join(a.podsDir, sourcePod.metadata.uid, 'volumes', 'kubernetes.io~empty-dir', 'public', 'migrationproxy');
      await suite.eventually('the source proxy\'s sockets removed', async () => ((await readdir(proxyDir).catch(() => [])).length === 0 ? true : undefined), 30_000);
    }
  });
});
