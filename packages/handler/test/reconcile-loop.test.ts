// The whole reconcile loop: HandlerController over an in-memory Kubernetes API and fake
// launchers on real unix sockets. Each test drives one VMI through a lifecycle.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { status as grpcStatus } from '@grpc/grpc-js';
import type { VirtualMachineInstance } from '@podvirt/api';
import { HandlerController } from '../src/handler-controller.js';
import { HandlerError } from '../src/handler-error.js';
import type { PodNetworkPhase } from '../src/network/pod-network-phase.js';
import type { IoErrorRetryOptions } from '../src/reconcile/io-error-retry.js';
import { eventually } from '@podvirt/test-support';
import { FakeLauncher, type FakeLauncherOptions } from './fake-launcher.js';
import { FakeEvents, FakeKube } from './fake-kube.js';
import { makeVmi, NODE, quietLog, type VmiShape } from './fixtures.js';

const KEY = 'default/vm1';

interface Harness {
  kube: FakeKube;
  events: FakeEvents;
  launcher: FakeLauncher;
  controller: HandlerController;
  vmi: () => VirtualMachineInstance;
}

async function harness(
  t: TestContext,
  shape: VmiShape,
  launcher: Partial<FakeLauncherOptions> = {},
  watchdogMs = 30_000,
  backoff = { baseDelayMs: 50, maxDelayMs: 400 },
  network?: PodNetworkPhase,
  ioErrorRetry?: IoErrorRetryOptions,
): Promise<Harness> {
  const podsDir = await mkdtemp(join(tmpdir(), 'pvh-'));
  t.after(() => rm(podsDir, { recursive: true, force: true }));
  const fake = await FakeLauncher.start({ podsDir, podUid: 'p1', ...launcher });
  t.after(() => fake.close());
  const kube = new FakeKube();
  const events = new FakeEvents();
  kube.create(makeVmi(shape));
  const controller = new HandlerController({
    nodeName: NODE,
    podsDir,
    vmiApi: kube,
    eventApi: events,
    log: quietLog(),
    workers: 2,
    watchdogMs,
    resyncPeriodMs: 60_000,
    launcherTimeouts: { shortMs: 500, longMs: 2_000 },
    backoff,
    reconnectBaseMs: 20,
    ...(network === undefined ? {} : { network }),
    ...(ioErrorRetry === undefined ? {} : { ioErrorRetry }),
  });
  t.after(async () => {
    await controller.close(2_000);
    // Leak checks: nothing the handler opened may outlive close().
    assert.equal(fake.openStreams, 0, 'WatchDomain streams left open');
    assert.equal(kube.openWatches, 0, 'VMI watches left open');
  });
  const ac = new AbortController();
  t.after(() => ac.abort());
  await controller.start(ac.signal);
  return { kube, events, launcher: fake, controller, vmi: () => kube.current(KEY) ?? assert.fail('VMI vanished') };
}

const phase = (h: Harness) => h.vmi().status?.phase;
const condition = (h: Harness, type: string) => h.vmi().status?.conditions?.find((c) => c.type === type);

test('Scheduled → Running → deleted: graceful shutdown → Succeeded, with KubeVirt\'s events', async (t) => {
  const h = await harness(t, { grace: 30 }, { shutdownAfterMs: 100 });
  await eventually(() => phase(h) === 'Running');
  assert.equal(h.launcher.domain?.state, 'Running');
  assert.deepEqual(h.vmi().status?.phaseTransitionTimestamps?.map((p) => p.phase), ['Running']);
  assert.equal(condition(h, 'Ready'), undefined, 'Ready belongs to the controller');
  await eventually(() => h.events.reasons().includes('Started'));
  assert.deepEqual(h.events.reasons().slice(0, 2), ['Created', 'Started']);
  const started = h.events.events.find((e) => e.reason === 'Started');
  assert.deepEqual(started?.source, { component: 'virt-handler', host: NODE });
  assert.deepEqual(started?.involvedObject.kind, 'VirtualMachineInstance');
  assert.equal(started?.involvedObject.uid, h.vmi().metadata.uid);

  h.kube.modify(KEY, (v) => (v.metadata.deletionTimestamp = new Date().toISOString()));
  await eventually(() => phase(h) === 'Succeeded');
  assert.ok(h.launcher.calls.includes('Shutdown'));
  assert.ok(!h.launcher.calls.includes('Kill'), 'the guest shut down within its grace period');
  await eventually(() => h.launcher.calls.includes('Delete'));
  // As in KubeVirt, the undefine (Deleted) is acted on before the status write (Stopped).
  assert.deepEqual(h.events.reasons(), ['Created', 'Started', 'ShuttingDown', 'Deleted', 'Stopped']);
  const stopped = h.events.events.find((e) => e.reason === 'Stopped');
  assert.equal(stopped?.type, 'Normal');
  assert.equal(stopped?.message, 'The VirtualMachineInstance was shut down.');
  assert.deepEqual(h.vmi().status?.phaseTransitionTimestamps?.map((p) => p.phase), ['Running', 'Succeeded']);
});

test('a guest that ignores ACPI is killed at the end of its grace period and goes Failed', async (t) => {
  const h = await harness(t, { grace: 1 });
  await eventually(() => phase(h) === 'Running');
  h.kube.modify(KEY, (v) => (v.metadata.deletionTimestamp = new Date().toISOString()));
  await eventually(() => h.launcher.calls.includes('Kill'), { deadlineMs: 4_000 });
  await eventually(() => phase(h) === 'Failed');
  const shutdowns = h.launcher.calls.filter((c) => c === 'Shutdown').length;
  assert.ok(shutdowns >= 1 && shutdowns <= 3, `Shutdown sent ${shutdowns} times within 1 s of grace`);
  assert.ok(h.events.reasons().includes('Deleted'));
});

test('a crash goes Failed with a Warning Stopped event; the launcher\'s panic notice is relayed', async (t) => {
  const h = await harness(t, {});
  await eventually(() => phase(h) === 'Running');
  h.launcher.notice('Warning', 'GuestPanicked', 'guest panicked: hyper-v crash');
  h.launcher.setDomain({ state: 'Crashed', reason: 'Panicked' });
  await eventually(() => phase(h) === 'Failed');
  await eventually(() => h.events.reasons().includes('!Stopped'));
  const stopped = h.events.events.find((e) => e.reason === 'Stopped');
  assert.equal(stopped?.message, 'The VirtualMachineInstance crashed.');
  const panic = h.events.events.find((e) => e.reason === 'GuestPanicked');
  assert.equal(panic?.type, 'Warning');
  assert.equal(panic?.message, 'guest panicked: hyper-v crash');
  await eventually(() => h.launcher.calls.includes('Delete'));
});

test('the pod network is wired before the launcher Sync; while it fails, no Sync is sent and the VMI says why', async (t) => {
  const wired: string[] = [];
  let failures = 2;
  const network: PodNetworkPhase = {
    ensure: (vmi) => {
      if (failures > 0) {
        failures -= 1;
        return Promise.reject(new HandlerError('HANDLER_ERR_POD_NETWORK', 'ip link add k6t-eth0 type bridge failed in the launcher pod\'s network namespace: RTNETLINK answers: Operation not permitted'));
      }
      // The handler wires the defaulted VMI: a VMI that names no interface gets KubeVirt's default one.
      wired.push(`${vmi.spec.domain.devices.interfaces?.map((i) => i.name).join(',') ?? ''}; syncs so far ${String(h.launcher.calls.filter((c) => c === 'Sync').length)}`);
      return Promise.resolve();
    },
    forget: () => undefined,
  };
  const h: Harness = await harness(t, {}, {}, 30_000, { baseDelayMs: 20, maxDelayMs: 50 }, network);
  await eventually(() => h.events.events.some((e) => e.reason === 'SyncFailed' && /Operation not permitted/.test(e.message ?? '')));
  assert.equal(condition(h, 'Synchronized')?.status, 'False');
  await eventually(() => phase(h) === 'Running');
  assert.deepEqual(wired[0], 'default; syncs so far 0', 'wired before the first Sync');
});

test('INVALID_ARGUMENT from the launcher: Synchronized=False and a Warning SyncFailed naming the field, retried with backoff', async (t) => {
  const details = 'spec.domain.cpu.model: Unsupported value: "host-passthrough": supported values: "host-model"';
  const h = await harness(t, {}, { syncError: { code: grpcStatus.INVALID_ARGUMENT, details } });
  await eventually(() => condition(h, 'Synchronized')?.status === 'False');
  const sync = condition(h, 'Synchronized');
  assert.equal(sync?.reason, 'Synchronizing with the Domain failed.');
  assert.match(sync?.message ?? '', /spec\.domain\.cpu\.model/);
  assert.equal(phase(h), 'Scheduled');
  const failed = h.events.events.find((e) => e.reason === 'SyncFailed');
  assert.equal(failed?.type, 'Warning');
  assert.match(failed?.message ?? '', /spec\.domain\.cpu\.model/);

  // Every failed Sync is retried through the queue's backoff, 50, 100, 200, 400, 400 ms: each
  // retry is scheduled later than the last, never at once (the schedule is the work queue's own
  // test; here, that the handler goes through it rather than looping).
  const retries: number[] = [];
  const addRateLimited = h.controller.queue.addRateLimited.bind(h.controller.queue);
  h.controller.queue.addRateLimited = (key: string) => {
    const delay = addRateLimited(key);
    retries.push(delay);
    return delay;
  };
  const syncsBefore = h.launcher.calls.filter((c) => c === 'Sync').length;
  await eventually(() => retries.length >= 4, { deadlineMs: 5_000, what: 'four retries through the backoff' });
  const syncs = h.launcher.calls.filter((c) => c === 'Sync').length - syncsBefore;
  // One Sync may have been in flight when the count began; a hot loop would make many more.
  assert.ok(syncs <= retries.length + 1, `${syncs} Sync calls for ${retries.length} scheduled retries`);
  for (let i = 1; i < retries.length; i++) assert.ok(retries[i]! >= retries[i - 1]!, `backoff ${retries.join(', ')} never shrinks`);
  assert.ok(retries.every((ms) => ms >= 50), `every retry waits: ${retries.join(', ')}`);
  assert.equal(retries.at(-1), 400, `the backoff reaches its cap: ${retries.join(', ')}`);
  await eventually(() => (h.events.events.find((e) => e.reason === 'SyncFailed')?.count ?? 0) >= 2);
  assert.equal(h.events.events.filter((e) => e.reason === 'SyncFailed').length, 1, 'repeats are counted on one Event');

  // The launcher accepts the VMI now: the condition goes away and the VM runs.
  h.launcher.options.syncError = undefined;
  await eventually(() => phase(h) === 'Running', { deadlineMs: 3_000 });
  await eventually(() => condition(h, 'Synchronized') === undefined);
});

test('a volume the launcher cannot prepare fails the VMI with a reason and a Warning Event, and is not retried', async (t) => {
  const details = 'spec.volumes[0].emptyDisk.capacity: 1125899906842624 bytes is larger than the pod\'s filesystem can hold';
  const h = await harness(t, {}, { syncError: { code: grpcStatus.FAILED_PRECONDITION, details, launcherCode: 'LAUNCHER_ERR_VOLUME' } });
  await eventually(() => phase(h) === 'Failed');
  assert.equal(h.vmi().status?.reason, 'VolumePreparationFailed');
  assert.match(condition(h, 'Synchronized')?.message ?? '', /spec\.volumes\[0\]\.emptyDisk\.capacity/);
  const failed = h.events.events.find((e) => e.reason === 'SyncFailed');
  assert.equal(failed?.type, 'Warning');
  assert.match(failed?.message ?? '', /spec\.volumes\[0\]\.emptyDisk\.capacity: .* larger than the pod's filesystem/);
  const stopped = h.events.events.find((e) => e.reason === 'Stopped');
  assert.equal(stopped?.type, 'Warning');
  assert.match(stopped?.message ?? '', /VolumePreparationFailed.*spec\.volumes\[0\]\.emptyDisk\.capacity/);
  await h.controller.queue.idle();
  assert.equal(h.launcher.calls.filter((c) => c === 'Sync').length, 1, 'a failure retrying cannot cure is not retried');
});

test('a pass that runs before its own status write comes back on the watch reads what it wrote: a Failed VMI is not synced again', async (t) => {
  const details = 'spec.volumes[0].emptyDisk.capacity: 1125899906842624 bytes is larger than the pod\'s filesystem can hold';
  const h = await harness(t, {}, { syncError: { code: grpcStatus.FAILED_PRECONDITION, details, launcherCode: 'LAUNCHER_ERR_VOLUME' } });
  h.kube.holdStatusEchoes = true;
  await eventually(() => phase(h) === 'Failed');
  await h.controller.queue.idle();
  // The informer still shows the VMI before the write (Scheduled) when the next pass runs.
  h.controller.queue.add(KEY);
  await h.controller.queue.idle();
  assert.equal(h.launcher.calls.filter((c) => c === 'Sync').length, 1, 'no second Sync on a stale read');
  assert.equal(h.events.events.filter((e) => e.reason === 'SyncFailed').length, 1);
  h.kube.holdStatusEchoes = false;
  h.kube.releaseStatusEchoes();
  h.controller.queue.add(KEY);
  await h.controller.queue.idle();
  assert.equal(h.launcher.calls.filter((c) => c === 'Sync').length, 1);
  assert.equal(phase(h), 'Failed');
});

test('a failing Sync keeps its backoff while the controller and the handler itself update the VMI', async (t) => {
  const details = 'spec.volumes[0].hostDisk: refused';
  // A backoff far longer than the test: any further Sync can only come from an update event.
  const h = await harness(t, {}, { syncError: { code: grpcStatus.INVALID_ARGUMENT, details } }, 30_000, { baseDelayMs: 600_000, maxDelayMs: 600_000 });
  await eventually(() => condition(h, 'Synchronized')?.status === 'False');
  await h.controller.queue.idle();
  const writes = h.kube.statusWrites;
  assert.equal(h.launcher.calls.filter((c) => c === 'Sync').length, 1);
  for (let i = 0; i < 20; i++) {
    // What the controller writes: its Ready condition and annotations, never the spec.
    h.kube.modify(KEY, (v) => {
      v.metadata.annotations = { ...v.metadata.annotations, bump: String(i) };
      v.status = { ...v.status, conditions: [...(v.status?.conditions ?? []).filter((c) => c.type !== 'Ready'), { type: 'Ready', status: 'False', reason: `r${i % 2}` }] };
    });
    await h.controller.queue.idle();
  }
  assert.equal(h.launcher.calls.filter((c) => c === 'Sync').length, 1, 'an update by someone else must not reset the backoff');
  assert.equal(h.kube.statusWrites, writes, 'nothing of the handler\'s changed, so nothing is written');
  assert.equal(condition(h, 'Synchronized')?.status, 'False');

  // A deletion is acted on at once, backoff or not, and with no domain it ends the VMI.
  h.kube.modify(KEY, (v) => (v.metadata.deletionTimestamp = new Date().toISOString()));
  await eventually(() => phase(h) === 'Failed');
  assert.ok(!h.events.reasons().includes('!Stopped'), 'a VMI deleted before it ran did not crash');
  assert.equal(h.launcher.calls.filter((c) => c === 'Sync').length, 1, 'a deleted VMI is never synced');
});

test('a disk that stays full: the I/O-error pause is resumed once, then waits for the backoff; no write storm', async (t) => {
  // A first wait far longer than the test: any further resume could only come from a reconcile storm.
  const h = await harness(t, {}, { diskFull: true }, 30_000, undefined, undefined, { initialMs: 600_000, maxMs: 600_000, settleMs: 600_000 });
  await eventually(() => phase(h) === 'Running');
  await h.controller.queue.idle();
  const uid = h.vmi().metadata.uid ?? assert.fail('no uid');
  // Every reconcile of a running VMI is a Sync; what matters is how often it resumes the domain.
  const syncs = () => h.launcher.resumes;
  const booted = syncs();
  h.launcher.notice('Warning', 'IOerror', 'I/O error on ua-disk0: enospc (action stop)');
  h.launcher.setDomain({ state: 'Paused', reason: 'IOError' });
  await eventually(() => h.controller.reconciler.ioErrorRetry.waiting(uid));
  await eventually(() => condition(h, 'Paused')?.reason === 'PausedIOError');
  await h.controller.queue.idle();
  assert.equal(syncs(), booted + 1, 'one resume, then the pause that follows it waits');
  assert.equal(h.launcher.domain?.state, 'Paused');
  const writes = h.kube.statusWrites;
  const events = h.events.events.length;
  for (let i = 0; i < 10; i++) {
    // Status echoes, resyncs and repeated pause events while the disk stays full.
    h.launcher.setDomain({ state: 'Paused', reason: 'IOError', observedAtMs: i });
    h.kube.modify(KEY, (v) => (v.metadata.annotations = { ...v.metadata.annotations, bump: String(i) }));
    await eventually(() => h.kube.current(KEY)?.metadata.annotations?.bump === String(i));
    await h.controller.queue.idle();
  }
  assert.equal(syncs(), booted + 1, 'no resume before the backoff is over');
  assert.equal(h.kube.statusWrites, writes, 'nothing changed, nothing written');
  assert.equal(h.events.events.length, events);
  const paused = condition(h, 'Paused');
  assert.equal(paused?.status, 'True');
  assert.equal(h.events.events.find((e) => e.reason === 'IOerror')?.type, 'Warning');
});

test('space freed: the VM paused by an I/O error resumes by itself after the backoff', async (t) => {
  const h = await harness(t, {}, { diskFull: true }, 30_000, undefined, undefined, { initialMs: 100, maxMs: 200, settleMs: 600_000 });
  await eventually(() => phase(h) === 'Running');
  const uid = h.vmi().metadata.uid ?? assert.fail('no uid');
  h.launcher.setDomain({ state: 'Paused', reason: 'IOError' });
  await eventually(() => h.controller.reconciler.ioErrorRetry.waiting(uid));
  h.launcher.options.diskFull = false;
  await eventually(() => h.launcher.domain?.state === 'Running' && condition(h, 'Paused') === undefined);
  assert.equal(phase(h), 'Running');
});

test('a resume that qemu undoes before any event shows it: the handler looks again when the next round is due', async (t) => {
  const h = await harness(t, {}, { diskFull: 'instant' }, 30_000, undefined, undefined, { initialMs: 100, maxMs: 200, settleMs: 600_000 });
  await eventually(() => phase(h) === 'Running');
  h.launcher.setDomain({ state: 'Paused', reason: 'IOError' });
  // No domain event follows any resume: only the handler's own requeue brings the next rounds.
  await eventually(() => h.launcher.resumes >= 3);
  h.launcher.options.diskFull = false;
  await eventually(() => h.launcher.domain?.state === 'Running' && condition(h, 'Paused') === undefined);
});

test('a VMI that fails local validation never reaches the launcher', async (t) => {
  const h = await harness(t, { memory: '64Mi' });
  await eventually(() => condition(h, 'Synchronized')?.status === 'False');
  assert.match(condition(h, 'Synchronized')?.message ?? '', /spec\.domain\.resources\.requests\.memory/);
  assert.ok(h.events.reasons().includes('!SyncFailed'));
  assert.ok(!h.launcher.calls.includes('Sync'));
});

test('a launcher with no common Cmd version fails the VMI with a reason', async (t) => {
  const h = await harness(t, {}, { versions: [9] });
  await eventually(() => phase(h) === 'Failed');
  assert.equal(h.vmi().status?.reason, 'LauncherIncompatible');
  assert.ok(h.events.reasons().includes('!SyncFailed'));
});

test('a Running VMI whose launcher stops answering goes Failed after the watchdog timeout', async (t) => {
  const h = await harness(t, {}, {}, 600);
  await eventually(() => phase(h) === 'Running');
  h.launcher.hang();
  await eventually(() => phase(h) === 'Failed', { deadlineMs: 4_000 });
  assert.ok(h.events.reasons().includes('!Stopped'));
  assert.equal(h.vmi().status?.reason, 'LauncherUnresponsive');
  h.launcher.resume();
});

test('a Running VMI whose launcher exited goes Failed at once (no watchdog) with a reason and a Warning Event', async (t) => {
  const h = await harness(t, {}, {}, 60_000);
  await eventually(() => phase(h) === 'Running');
  await h.launcher.exit();
  // Far inside the 60 s watchdog: the refused socket is the verdict.
  await eventually(() => phase(h) === 'Failed', { deadlineMs: 3_000 });
  assert.equal(h.vmi().status?.reason, 'LauncherExited');
  const stopped = h.events.events.find((e) => e.reason === 'Stopped');
  assert.equal(stopped?.type, 'Warning');
  assert.match(stopped?.message ?? '', /launcher exited/);
});

test('status conflicts are retried on a fresh object', async (t) => {
  const h = await harness(t, {});
  h.kube.conflicts = 2;
  await eventually(() => phase(h) === 'Running');
  assert.equal(h.vmi().metadata.annotations?.['touched'] !== undefined, true, 'the competing write survived');
});

test('a VMI labelled for this node before the controller recorded status.nodeName is left alone until it has', async (t) => {
  const h = await harness(t, { phase: 'Scheduling', nodeNameUnset: true });
  // Once the queue has handled the VMI's add event, the handler has made its decision.
  await eventually(() => h.controller.queue.length === 0, { what: 'the add event taken from the queue' });
  await h.controller.queue.idle();
  assert.equal(phase(h), 'Scheduling', 'the handler must not move a VMI the controller has not handed over');
  assert.deepEqual(h.launcher.calls.filter((c) => c === 'Sync'), []);
  h.kube.modify(KEY, (vmi) => {
    vmi.status = { ...vmi.status, phase: 'Scheduled', nodeName: NODE };
  });
  await eventually(() => phase(h) === 'Running');
});

test('a Sync waiting on its domain\'s start gives its worker back: with one worker, a later VMI starts meanwhile', async (t) => {
  const podsDir = await mkdtemp(join(tmpdir(), 'pvh-'));
  t.after(() => rm(podsDir, { recursive: true, force: true }));
  const slow = await FakeLauncher.start({ podsDir, podUid: 'p1' });
  t.after(() => slow.close());
  const quick = await FakeLauncher.start({ podsDir, podUid: 'p2' });
  t.after(() => quick.close());
  slow.holdSyncs();
  const kube = new FakeKube();
  const events = new FakeEvents();
  kube.create(makeVmi({}));
  const controller = new HandlerController({
    nodeName: NODE, podsDir, vmiApi: kube, eventApi: events, log: quietLog(), workers: 1,
    watchdogMs: 30_000, resyncPeriodMs: 60_000, launcherTimeouts: { shortMs: 500, longMs: 10_000 },
    backoff: { baseDelayMs: 50, maxDelayMs: 400 }, reconnectBaseMs: 20,
  });
  t.after(async () => {
    await controller.close(2_000);
    assert.equal(slow.openStreams + quick.openStreams, 0, 'WatchDomain streams left open');
    assert.equal(kube.openWatches, 0, 'VMI watches left open');
  });
  const ac = new AbortController();
  t.after(() => ac.abort());
  await controller.start(ac.signal);
  await eventually(() => slow.heldSyncs === 1, { what: 'the first VMI\'s Sync held by its launcher' });

  kube.create(makeVmi({ name: 'vm2', uid: 'uid-2', podUid: 'p2' }));
  await eventually(() => kube.current('default/vm2')?.status?.phase === 'Running', { what: 'the second VMI Running' });
  // One, not two: the parked reconcile keeps its key, so no second pass synced it meanwhile.
  assert.equal(slow.heldSyncs, 1, 'the first Sync is still waiting, alone');
  assert.notEqual(kube.current(KEY)?.status?.phase, 'Running');

  slow.releaseSyncs();
  await eventually(() => kube.current(KEY)?.status?.phase === 'Running', { what: 'the first VMI Running' });
});
