// Both handler sides of a live migration over one in-memory API: two HandlerControllers (the
// source node01 and the target node02), fake launchers on real unix sockets, fake proxy
// endpoints. The test writes what the controller writes (migrationState, the target label,
// activePods, the hand-over) and checks what each handler does and writes — and how often.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { MIGRATION_TARGET_NODE_LABEL as TARGET_LABEL, NODE_NAME_LABEL, type DefaultedVmi, type VirtualMachineInstance, type VmiMigrationState } from '@podvirt/api';
import { cmd } from '@podvirt/proto';
import { eventually } from '@podvirt/test-support';
import { HandlerController } from '../src/handler-controller.js';
import type { MigrationEndpoints, SourceEndpoint, TargetEndpoint } from '../src/live-migration/migration-endpoints.js';
import { DEFAULT_MIGRATION_SETTINGS, type MigrationSettings } from '../src/live-migration/migration-settings.js';
import type { PodNetworkPhase } from '../src/network/pod-network-phase.js';
import { FakeLauncher } from './fake-launcher.js';
import { FakeEvents, FakeKube } from './fake-kube.js';
import { makeVmi, NODE, quietLog } from './fixtures.js';

const KEY = 'default/vm1';
const TARGET = 'node02';
const PORTS = { '40001': 0, '40002': 49152, '40003': 49153 };
const SETTINGS: MigrationSettings = { ...DEFAULT_MIGRATION_SETTINGS, bandwidthMiBs: 32, allowAutoConverge: true };

class FakeEndpoints implements MigrationEndpoints {
  readonly opened: string[] = [];
  open = 0;
  openTarget(o: { uid: string; launcherSocket: string }): Promise<TargetEndpoint> {
    this.opened.push(`target:${o.launcherSocket}`);
    this.open++;
    return Promise.resolve({ address: '10.0.0.2', ports: PORTS, close: () => this.#close() });
  }

  openSource(o: { uid: string; launcherSocket: string; address: string; ports: Readonly<Record<string, number>> }): Promise<SourceEndpoint> {
    this.opened.push(`source:${o.address}:${Object.keys(o.ports).join(',')}`);
    this.open++;
    return Promise.resolve({
      destinationUri: 'qemu+unix:///system?socket=/var/run/kubevirt/sockets/mig-0',
      migrateUri: 'unix:///var/run/kubevirt/sockets/mig-49152',
      disksUri: 'unix:///var/run/kubevirt/sockets/mig-49153',
      close: () => this.#close(),
    });
  }

  readonly swept: string[] = [];
  sweepSource(o: { launcherSocket: string }): Promise<void> {
    this.swept.push(o.launcherSocket);
    return Promise.resolve();
  }

  #close(): Promise<void> {
    this.open--;
    return Promise.resolve();
  }
}

class RecordingNetwork implements PodNetworkPhase {
  readonly sockets: Array<string | undefined> = [];
  ensure(_vmi: DefaultedVmi, _signal?: AbortSignal, launcherSocket?: string): Promise<void> {
    this.sockets.push(launcherSocket);
    return Promise.resolve();
  }

  forget(): void {}
}

interface Node {
  controller: HandlerController;
  /** Reconcile passes finished on this node. */
  readonly reconciles: () => number;
  endpoints: FakeEndpoints;
  network: RecordingNetwork;
  podsDir: string;
}

interface Harness {
  kube: FakeKube;
  source: Node;
  target: Node;
  srcLauncher: FakeLauncher;
  dstLauncher: FakeLauncher;
  vmi: () => VirtualMachineInstance;
  ms: () => VmiMigrationState;
  restartSource: () => Promise<Node>;
}

async function startNode(t: TestContext, kube: FakeKube, nodeName: string, podsDir: string): Promise<Node> {
  const endpoints = new FakeEndpoints();
  const network = new RecordingNetwork();
  let reconciles = 0;
  const controller = new HandlerController({
    observeReconcile: () => void reconciles++,
    nodeName, podsDir, vmiApi: kube, eventApi: new FakeEvents(), log: quietLog(), workers: 2, watchdogMs: 30_000, resyncPeriodMs: 60_000,
    launcherTimeouts: { shortMs: 500, longMs: 2_000 }, backoff: { baseDelayMs: 50, maxDelayMs: 400 }, reconnectBaseMs: 20,
    network, migrations: { endpoints, settings: SETTINGS },
  });
  const ac = new AbortController();
  t.after(async () => {
    ac.abort();
    await controller.close(2_000);
    assert.equal(endpoints.open, 0, `${nodeName}: migration endpoints left open`);
  });
  await controller.start(ac.signal);
  return { controller, endpoints, network, podsDir, reconciles: () => reconciles };
}

async function harness(t: TestContext): Promise<Harness> {
  const dirs = await Promise.all([mkdtemp(join(tmpdir(), 'pvm-a-')), mkdtemp(join(tmpdir(), 'pvm-b-'))]);
  t.after(() => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));
  const [dirA, dirB] = dirs as [string, string];
  const srcLauncher = await FakeLauncher.start({ podsDir: dirA, podUid: 'p1' });
  const dstLauncher = await FakeLauncher.start({ podsDir: dirB, podUid: 'p2' });
  t.after(() => Promise.all([srcLauncher.close(), dstLauncher.close()]));
  const kube = new FakeKube();
  kube.create(makeVmi({}));
  let source = await startNode(t, kube, NODE, dirA);
  const target = await startNode(t, kube, TARGET, dirB);
  const vmi = (): VirtualMachineInstance => kube.current(KEY) ?? assert.fail('VMI vanished');
  return {
    kube, target, srcLauncher, dstLauncher, vmi,
    get source() {
      return source;
    },
    ms: () => vmi().status?.migrationState ?? {},
    restartSource: async () => {
      await source.controller.close(2_000);
      source = await startNode(t, kube, NODE, dirA);
      return source;
    },
  };
}

/** What the controller does once the target pod runs: migrationState, the target label, both pods. */
function startMigration(h: Harness): void {
  h.kube.modify(KEY, (v) => {
    v.metadata.labels = { ...v.metadata.labels, [TARGET_LABEL]: TARGET };
    v.status = {
      ...v.status,
      activePods: { p1: NODE, p2: TARGET },
      migrationState: { migrationUid: 'mig-1', sourceNode: NODE, sourcePod: 'launcher-a', targetNode: TARGET, targetPod: 'launcher-b' },
    };
  });
}

function patchMigrationState(h: Harness, patch: Partial<VmiMigrationState>): void {
  h.kube.modify(KEY, (v) => {
    v.status = { ...v.status, migrationState: { ...v.status?.migrationState, ...patch } };
  });
}

/** What the controller does at the end: the target node owns the VMI. */
function handOver(h: Harness): void {
  h.kube.modify(KEY, (v) => {
    const labels: Record<string, string> = { ...v.metadata.labels, [NODE_NAME_LABEL]: TARGET };
    delete labels[TARGET_LABEL];
    v.metadata.labels = labels;
    v.status = { ...v.status, nodeName: TARGET, activePods: { p1: NODE, p2: TARGET } };
  });
}

const progress = (launcher: FakeLauncher, p: Partial<cmd.MigrationProgress>): void => {
  const m = launcher.domain?.migration ?? assert.fail('no migration running');
  launcher.setDomain({ migration: cmd.MigrationProgress.fromPartial({ ...m, ...p }) });
};

async function migrating(h: Harness): Promise<void> {
  await eventually(() => h.vmi().status?.phase === 'Running');
  startMigration(h);
  await eventually(() => h.ms().targetNodeAddress !== undefined);
  await eventually(() => h.ms().startTimestamp !== undefined);
}

test('the guest moves: the target prepares (never Sync), the source migrates through the proxy, both report, bounded writes', async (t) => {
  const h = await harness(t);
  await eventually(() => h.vmi().status?.phase === 'Running');
  assert.equal(h.dstLauncher.calls.length, 0, 'node02 knows nothing of the VMI before the migration');
  startMigration(h);

  await eventually(() => h.ms().targetNodeAddress !== undefined);
  assert.equal(h.ms().targetNodeAddress, '10.0.0.2');
  assert.deepEqual(h.ms().targetDirectMigrationNodePorts, PORTS);
  assert.ok(h.dstLauncher.calls.includes('PrepareMigrationTarget'));
  assert.ok(!h.dstLauncher.calls.includes('Sync'), 'the target domain is never started by Sync');
  assert.deepEqual(h.target.network.sockets, [h.dstLauncher.path], 'the pod network phase ran for the target pod, first');
  assert.deepEqual(h.target.endpoints.opened, [`target:${h.dstLauncher.path}`]);

  await eventually(() => h.srcLauncher.migrateRequests.length === 1);
  const req = h.srcLauncher.migrateRequests[0];
  assert.ok(req !== undefined);
  assert.deepEqual(h.source.endpoints.opened, ['source:10.0.0.2:40001,40002,40003']);
  assert.equal(req.destinationUri, 'qemu+unix:///system?socket=/var/run/kubevirt/sockets/mig-0');
  assert.equal(req.migrateUri, 'unix:///var/run/kubevirt/sockets/mig-49152');
  assert.equal(req.disksUri, 'unix:///var/run/kubevirt/sockets/mig-49153');
  assert.equal(req.blockMigration, true, 'a container disk moves with the memory');
  assert.equal(Number(req.bandwidthMibPerSecond), 32);
  assert.equal(req.progressTimeoutSeconds, 150);
  assert.equal(req.completionTimeoutPerGibSeconds, 150);
  assert.equal(req.allowAutoConverge, true);
  assert.equal(req.allowPostCopy, false);
  await eventually(() => h.ms().startTimestamp !== undefined && h.ms().mode === 'PreCopy');

  // A second of progress reports each: none of them is written.
  const writes = h.kube.statusWrites;
  for (let i = 1; i <= 30; i++) progress(h.srcLauncher, { dataTotal: 1000, dataRemaining: 1000 - i * 30, iterations: i });
  await eventually(() => h.srcLauncher.domain?.migration?.iterations === 30);
  // The switch: the target runs the guest, the source's domain is gone with it.
  h.dstLauncher.setDomain({ state: 'Running', reason: 'Migrated', deleted: false });
  await eventually(() => h.ms().targetNodeDomainDetected === true);
  assert.ok(h.ms().targetNodeDomainReadyTimestamp !== undefined);
  progress(h.srcLauncher, { phase: 'Succeeded', endedAtMs: Date.now(), dataRemaining: 0 });
  h.srcLauncher.setDomain({ state: 'Shutoff', reason: 'Migrated' });
  await eventually(() => h.ms().completed === true);
  assert.ok(h.ms().endTimestamp !== undefined);
  assert.equal(h.ms().failed, undefined);
  assert.ok(h.kube.statusWrites - writes <= 3, `${h.kube.statusWrites - writes} status writes from 30 progress reports to the end (detected, completed)`);
  assert.equal(h.vmi().status?.phase, 'Running', 'the source never writes a phase for a guest that left');
  assert.equal(h.source.endpoints.open, 0, 'the source closed its end once the migration ended');

  const passes = h.target.reconciles();
  handOver(h);
  await eventually(() => h.target.endpoints.open === 0);
  // The target owns it now: the running domain is kept, not prepared again, and not synced
  // either (Sync would change nothing of a running domain).
  await eventually(() => h.target.reconciles() > passes);
  await h.target.controller.queue.idle();
  assert.ok(!h.dstLauncher.calls.includes('Sync'), h.dstLauncher.calls.join(', '));
  assert.equal(h.dstLauncher.calls.filter((c) => c === 'PrepareMigrationTarget').length, 1);
  assert.equal(h.dstLauncher.domain?.state, 'Running');
  assert.ok(!h.dstLauncher.calls.some((c) => ['Shutdown', 'Kill', 'Delete'].includes(c)), 'the migrated guest is never shut down');
  // The source's launcher exits (its domain left): nothing is written for it.
  await h.srcLauncher.exit();
  await eventually(() => !h.source.controller.registry.uidsFor(KEY).includes('uid-1'));
  assert.equal(h.vmi().status?.phase, 'Running');
  assert.deepEqual(h.vmi().status?.phaseTransitionTimestamps?.map((p) => p.phase), ['Running']);
  assert.ok(!h.srcLauncher.calls.some((c) => ['Shutdown', 'Kill'].includes(c)));
});

test('target launcher killed mid-migration: the source keeps the guest and reports failed with the reason', async (t) => {
  const h = await harness(t);
  await migrating(h);
  await h.dstLauncher.exit();
  // The source's daemon loses the destination: libvirt fails the job, the guest stays here.
  progress(h.srcLauncher, { phase: 'Failed', endedAtMs: Date.now(), failureReason: 'the destination daemon went away' });
  await eventually(() => h.ms().failed === true);
  assert.equal(h.ms().failureReason, 'the destination daemon went away');
  assert.equal(h.ms().completed, undefined);
  assert.equal(h.vmi().status?.phase, 'Running');
  assert.equal(h.srcLauncher.domain?.state, 'Running');
  await eventually(() => h.source.endpoints.open === 0 && h.target.endpoints.open === 0);
  assert.ok(!h.srcLauncher.calls.some((c) => ['Shutdown', 'Kill', 'Delete'].includes(c)));
  assert.equal(h.srcLauncher.migrateRequests.length, 1, 'a failed migration is not retried by the handler');
});

test('abort requested: CancelMigration, then abortStatus and the failure are reported', async (t) => {
  const h = await harness(t);
  await migrating(h);
  patchMigrationState(h, { abortRequested: true });
  await eventually(() => h.srcLauncher.calls.includes('CancelMigration'));
  await eventually(() => h.ms().abortStatus === 'Aborting');
  progress(h.srcLauncher, { phase: 'Failed', endedAtMs: Date.now(), abortStatus: 'Succeeded', failureReason: 'the migration was cancelled' });
  await eventually(() => h.ms().abortStatus === 'Succeeded' && h.ms().failed === true);
  assert.equal(h.srcLauncher.calls.filter((c) => c === 'CancelMigration').length, 1);
  assert.equal(h.vmi().status?.phase, 'Running');
});

test('abort requested before the start: never migrates, reports it aborted', async (t) => {
  const h = await harness(t);
  await eventually(() => h.vmi().status?.phase === 'Running');
  h.kube.modify(KEY, (v) => {
    v.status = { ...v.status, migrationState: { migrationUid: 'mig-1', sourceNode: NODE, targetNode: TARGET, abortRequested: true, targetNodeAddress: '10.0.0.2', targetDirectMigrationNodePorts: PORTS } };
  });
  await eventually(() => h.ms().failed === true);
  assert.equal(h.ms().abortStatus, 'Succeeded');
  assert.equal(h.srcLauncher.migrateRequests.length, 0);
});

test('source handler restarted mid-migration: it adopts the running migration, never starts a second, reports its end', async (t) => {
  const h = await harness(t);
  await migrating(h);
  const source = await h.restartSource();
  // The proxy died with the old handler: libvirt fails the job.
  progress(h.srcLauncher, { phase: 'Failed', endedAtMs: Date.now(), failureReason: 'connection reset' });
  await eventually(() => h.ms().failed === true);
  assert.equal(h.ms().failureReason, 'connection reset');
  assert.equal(h.srcLauncher.migrateRequests.length, 1, 'exactly one Migrate across the restart');
  assert.deepEqual(source.endpoints.opened, [], 'the new handler opened no second proxy');
  await eventually(() => source.endpoints.swept.length === 1);
  assert.deepEqual(source.endpoints.swept, [h.srcLauncher.path], 'what the killed handler\'s proxy left in the pod is swept, once');
  assert.equal(h.vmi().status?.phase, 'Running');
});

test('source launcher gone after the switch while its handler was away: the target\'s report completes it', async (t) => {
  const h = await harness(t);
  await migrating(h);
  await h.source.controller.close(2_000);
  // The migration finished while no source handler ran; the source launcher left with the guest.
  h.dstLauncher.setDomain({ state: 'Running', reason: 'Migrated', deleted: false });
  await eventually(() => h.ms().targetNodeDomainDetected === true);
  await h.srcLauncher.exit();
  await h.restartSource();
  await eventually(() => h.ms().completed === true);
  assert.equal(h.ms().failed, undefined);
  assert.equal(h.vmi().status?.phase, 'Running', 'never Failed for a launcher that left with its guest');
});

test('hand-over seen first as the target label leaving: the target reads the VMI again and never takes the guest for an orphan', async (t) => {
  const h = await harness(t);
  await migrating(h);
  h.dstLauncher.setDomain({ state: 'Running', reason: 'Migrated', deleted: false });
  progress(h.srcLauncher, { phase: 'Succeeded', endedAtMs: Date.now() });
  h.srcLauncher.setDomain({ state: 'Shutoff', reason: 'Migrated' });
  await eventually(() => h.ms().completed === true && h.ms().targetNodeDomainDetected === true);
  h.kube.modify(KEY, (v) => {
    v.status = { ...v.status, nodeName: TARGET };
  });
  // The target informer loses the VMI before node02's own informer has it (two watch streams).
  const gets = h.kube.gets;
  h.kube.modify(KEY, (v) => {
    const labels: Record<string, string> = { ...v.metadata.labels };
    delete labels[TARGET_LABEL];
    v.metadata.labels = labels;
  });
  // Either it asked the API (the guard) or it acted on the guest as an orphan.
  await eventually(() => h.kube.gets > gets || h.dstLauncher.calls.some((c) => ['Shutdown', 'Kill', 'Delete'].includes(c)));
  assert.deepEqual(h.dstLauncher.calls.filter((c) => ['Shutdown', 'Kill', 'Delete'].includes(c)), [], 'not an orphan: the migrated guest is kept');
  await h.target.controller.queue.idle();
  const passes = h.target.reconciles();
  h.kube.modify(KEY, (v) => {
    v.metadata.labels = { ...v.metadata.labels, [NODE_NAME_LABEL]: TARGET };
  });
  // node02's own informer now has it: a pass as its owner keeps the guest.
  await eventually(() => h.target.reconciles() > passes);
  await h.target.controller.queue.idle();
  assert.deepEqual(h.dstLauncher.calls.filter((c) => ['Shutdown', 'Kill', 'Delete'].includes(c)), [], 'the migrated guest is never shut down');
  assert.equal(h.dstLauncher.domain?.state, 'Running');
});
