// A handler restart with fakes: ghost records on a temp dir outlive the first controller; the
// second one re-adopts the running VM without touching its phase, shuts down the launcher of a
// VMI deleted while no handler ran (known only from its record), and forgets records whose
// launcher is gone. A launcher that stops answering gets the unresponsive marker.
import assert from 'node:assert/strict';
import { access, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { test, type TestContext } from 'node:test';
import type { VirtualMachineInstance } from '@podvirt/api';
import { GhostRecordStore } from '../src/ghost-records/ghost-record-store.js';
import { UNRESPONSIVE_MARKER } from '../src/ghost-records/unresponsive-marker.js';
import { HandlerController } from '../src/handler-controller.js';
import { eventually } from '@podvirt/test-support';
import { FakeEvents, FakeKube } from './fake-kube.js';
import { FakeLauncher } from './fake-launcher.js';
import { makeVmi, NODE, quietLog } from './fixtures.js';

interface Env {
  readonly podsDir: string;
  readonly recordDir: string;
  readonly kube: FakeKube;
  readonly events: FakeEvents;
  /** A controller over a freshly loaded record store, as a restarted handler has. */
  handler(watchdogMs?: number): Promise<HandlerController>;
}

async function env(t: TestContext): Promise<Env> {
  const podsDir = await mkdtemp(join(tmpdir(), 'pvh-restart-'));
  t.after(() => rm(podsDir, { recursive: true, force: true }));
  const kube = new FakeKube();
  const events = new FakeEvents();
  const recordDir = join(podsDir, 'ghost-records');
  return {
    podsDir, recordDir, kube, events,
    async handler(watchdogMs = 30_000) {
      const records = new GhostRecordStore(recordDir, quietLog());
      await records.load();
      const controller = new HandlerController({
        nodeName: NODE, podsDir, vmiApi: kube, eventApi: events, log: quietLog(), workers: 2, watchdogMs, resyncPeriodMs: 60_000,
        launcherTimeouts: { shortMs: 300, longMs: 1_000 }, backoff: { baseDelayMs: 50, maxDelayMs: 400 }, reconnectBaseMs: 20, records,
      });
      const ac = new AbortController();
      t.after(async () => {
        ac.abort();
        await controller.close(2_000);
      });
      await controller.start(ac.signal);
      return controller;
    },
  };
}

async function launcher(t: TestContext, podsDir: string, podUid: string): Promise<FakeLauncher> {
  const fake = await FakeLauncher.start({ podsDir, podUid, shutdownAfterMs: 50 });
  t.after(() => fake.close());
  return fake;
}

const phases = (vmi: VirtualMachineInstance | undefined) => vmi?.status?.phaseTransitionTimestamps?.map((p) => p.phase);

test('restart: the survivor is re-adopted untouched, a VMI deleted meanwhile is shut down and its record removed', async (t) => {
  const e = await env(t);
  const l1 = await launcher(t, e.podsDir, 'p1');
  const l2 = await launcher(t, e.podsDir, 'p2');
  e.kube.create(makeVmi({ name: 'vm1', uid: 'uid-1', podUid: 'p1', grace: 30 }));
  e.kube.create(makeVmi({ name: 'vm2', uid: 'uid-2', podUid: 'p2', grace: 30 }));

  const first = await e.handler();
  await eventually(() => e.kube.current('default/vm1')?.status?.phase === 'Running' && e.kube.current('default/vm2')?.status?.phase === 'Running');
  assert.deepEqual((await readdir(e.recordDir)).sort(), ['uid-1', 'uid-2']);
  // SIGKILL has no close(); a graceful close leaves the same state on disk and the VMs running.
  await first.close(2_000);
  assert.equal(l1.domain?.state, 'Running');
  await eventually(() => l2.openStreams === 0);

  // While no handler runs: vm2's object disappears for good (a forced delete), and a record
  // points at a launcher whose pod is already gone.
  e.kube.removeQuietly('default/vm2');
  await writeFile(join(e.recordDir, 'uid-9'), JSON.stringify({ name: 'vm9', namespace: 'default', socketFile: join(e.podsDir, 'gone', 'launcher-sock'), uid: 'uid-9' }));
  const eventsBefore = e.events.events.length;
  const l1CallsBefore = l1.calls.length;

  await e.handler();
  await eventually(() => l2.calls.includes('Delete'));
  assert.ok(l2.calls.includes('Shutdown') && !l2.calls.includes('Kill'), 'graceful, within its grace');
  await eventually(async () => (await readdir(e.recordDir)).join() === 'uid-1');

  assert.equal(e.kube.current('default/vm1')?.status?.phase, 'Running');
  assert.deepEqual(phases(e.kube.current('default/vm1')), ['Running'], 'no phase change for the survivor');
  assert.ok(l1.calls.slice(l1CallsBefore).includes('Info'), 're-adopted: connected again');
  await eventually(() => l1.openStreams === 1);
  const after = e.events.events.slice(eventsBefore).map((ev) => `${ev.involvedObject.name}:${ev.reason}`);
  assert.ok(!after.some((r) => r.startsWith('vm1:')), `nothing recorded for the survivor: ${after.join(', ')}`);
  assert.ok(after.includes('vm2:ShuttingDown'), after.join(', '));
});

test('a launcher silent past the watchdog is marked unresponsive next to its socket; the mark survives a restart', async (t) => {
  const e = await env(t);
  const l1 = await launcher(t, e.podsDir, 'p1');
  e.kube.create(makeVmi({ name: 'vm1', uid: 'uid-1', podUid: 'p1' }));
  const first = await e.handler(300);
  await eventually(() => e.kube.current('default/vm1')?.status?.phase === 'Running');
  l1.hang();
  const marker = join(dirname(l1.path), UNRESPONSIVE_MARKER);
  await eventually(async () => access(marker).then(() => true, () => false), { deadlineMs: 3_000 });
  await eventually(() => e.kube.current('default/vm1')?.status?.phase === 'Failed', { deadlineMs: 3_000 });
  await first.close(2_000);
  l1.resume();

  // The launcher answers again, but the decision stands: the new handler does not reconnect.
  e.kube.create(makeVmi({ name: 'vm3', uid: 'uid-3', podUid: 'p1', phase: 'Running' }));
  const callsBefore = l1.calls.length;
  const second = await e.handler(300);
  await eventually(() => e.kube.current('default/vm3')?.status?.phase === 'Failed', { deadlineMs: 3_000 });
  assert.ok(!l1.calls.slice(callsBefore).includes('Info'), 'no new connection to a launcher marked unresponsive');
  await second.close(2_000);
});
