// The domain's end of life through the manager: graceful shutdown obeyed, ignored (destroy
// at the deadline), a crash, and the libvirt daemon dying under a running domain.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pino } from 'pino';
import { eventually } from '@podvirt/test-support';
import { waitForEnd } from '../src/domain/wait-for-end.js';
import { harness, vmiRequest, watchUntil } from './harness.js';

test('graceful shutdown: marked on the domain, guest powers off, domain is gone', async (t) => {
  // The controller pads the launcher's period (--grace-period-seconds) beyond the VMI's.
  const h = await harness(t, { gracePeriodMs: 45_000 });
  await h.cmd.sync(vmiRequest({ ...h.vmi, spec: { ...h.vmi.spec, terminationGracePeriodSeconds: 20 } }));
  h.fake().acpiObeyed = false;
  assert.equal(h.manager.beginGracefulShutdown(), true);
  const marked = (await h.cmd.getDomain({})).domain;
  assert.equal(marked?.gracefulShutdown?.started, true);
  // The handler is told the VMI's own period; the launcher destroys at its own, padded one.
  assert.equal(marked?.gracefulShutdown?.gracePeriodSeconds, 20);
  assert.equal(marked.gracefulShutdown.deadlineMs - marked.gracefulShutdown.startedAtMs, 45_000);
  await eventually(() => h.fake().calls.filter((c) => c === 'shutdown').length >= 2, { what: 'the request re-sent while the guest is up' });
  h.fake().acpiObeyed = true;
  const gone = await h.manager.tracker.gone;
  assert.equal(`${gone?.state}/${gone?.reason}/${gone?.deleted}`, 'Shutoff/Shutdown/true');
  assert.equal(h.manager.beginGracefulShutdown(), false, 'nothing left to shut down');
});

test('a guest that ignores the power button is destroyed at the grace deadline', async (t) => {
  const h = await harness(t, { gracePeriodMs: 400 });
  await h.cmd.sync(vmiRequest(h.vmi));
  h.fake().acpiObeyed = false;
  await h.cmd.shutdown(vmiRequest(h.vmi));
  const gone = await h.manager.tracker.gone;
  assert.equal(`${gone?.state}/${gone?.reason}`, 'Shutoff/Destroyed');
  // The power button first, the destroy only once the guest has ignored it.
  const calls = h.fake().calls;
  assert.ok(calls.indexOf('shutdown') >= 0 && calls.indexOf('shutdown') < calls.indexOf('destroy'), calls.join(', '));
  assert.equal(h.fake().calls.filter((c) => c === 'destroy').length, 1);
});

test('a crash is reported and ends the domain; sync does not restart it', async (t) => {
  const h = await harness(t);
  await h.cmd.sync(vmiRequest(h.vmi));
  h.fake().setState('SHUTOFF', 'CRASHED', ['STOPPED', 'FAILED']);
  const gone = await h.manager.tracker.gone;
  assert.equal(`${gone?.state}/${gone?.reason}/${gone?.deleted}`, 'Shutoff/Crashed/true');
  await h.cmd.sync(vmiRequest(h.vmi));
  assert.equal(h.fake().calls.filter((c) => c === 'create').length, 1);
});

test('only a Sync that defines the domain converts the VMI; later ones leave it, and its lock, alone', async (t) => {
  const h = await harness(t);
  await h.cmd.sync(vmiRequest(h.vmi));
  await h.cmd.sync(vmiRequest(h.vmi));
  await h.cmd.pause(vmiRequest(h.vmi));
  await h.cmd.sync(vmiRequest(h.vmi));
  assert.equal(h.conversions(), 1);
  assert.deepEqual(h.fake().calls.filter((c) => c === 'define' || c === 'create'), ['define', 'create']);
  assert.equal(h.fake().status?.state, 'PAUSED', 'a Sync does not resume a domain the user paused');
});

test('the libvirt daemon dies: reconnect, state re-read, events flow again, nothing leaks', async (t) => {
  const h = await harness(t);
  await h.cmd.sync(vmiRequest(h.vmi));
  const first = h.fake();
  first.kill();
  await eventually(() => h.fakes.length >= 2, { what: 'a second libvirt connection' });
  assert.notEqual(h.fake(), first);
  const resumed = watchUntil(h.client, (evs) => evs.some((e) => e.event?.$case === 'domain' && e.event.value.state === 'Paused'));
  await eventually(() => h.hub.size >= 1, { what: 'a watcher subscribed' });
  h.fake().setState('PAUSED', 'IOERROR', ['SUSPENDED', 'IOERROR']);
  const last = (await resumed).at(-1);
  assert.equal(last?.event?.$case === 'domain' && last.event.value.reason, 'IOError');
  await h.cmd.unpause(vmiRequest(h.vmi));
  assert.equal(h.fake().status?.state, 'RUNNING');
});

test('told to stop before the domain ever ran, the launcher ends at once instead of waiting for qemu', async (t) => {
  const h = await harness(t);
  const log = pino({ level: 'silent' });
  // A Sync that defined the domain but failed to start it leaves it defined and shut off.
  h.fake().failures.set('create', new Error('internal error: qemu unexpectedly closed the monitor'));
  await assert.rejects(h.cmd.sync(vmiRequest(h.vmi)));
  assert.equal(h.fake().status?.state, 'SHUTOFF');
  const stop = new AbortController();
  const ended = waitForEnd({ manager: h.manager, hub: h.hub, log, qemuTimeoutMs: 600_000, finalFlushMs: 1_000 }, stop.signal);
  stop.abort();
  assert.equal(await ended, 0);

  // And with no domain at all: the stop wins over the qemu timeout too.
  const h2 = await harness(t);
  const stop2 = new AbortController();
  const ended2 = waitForEnd({ manager: h2.manager, hub: h2.hub, log, qemuTimeoutMs: 600_000, finalFlushMs: 1_000 }, stop2.signal);
  stop2.abort();
  assert.equal(await ended2, 0);
});

test('pause and unpause make one libvirt call each, and the answer already shows their state', async (t) => {
  const h = await harness(t);
  await h.cmd.sync(vmiRequest(h.vmi));
  await eventually(async () => (await h.cmd.getDomain({})).domain?.state === 'Running', { what: 'the domain running' });
  const from = h.fake().calls.length;
  await h.cmd.pause(vmiRequest(h.vmi));
  // Read before any event could be handled: the published domain already shows the pause.
  const paused = h.manager.tracker.snapshot();
  assert.equal(`${paused?.state}/${paused?.reason}/${paused?.pausedByUser}`, 'Paused/User/true');
  assert.deepEqual(h.fake().calls.slice(from, from + 1), ['suspend']);
  const mid = h.fake().calls.length;
  await h.cmd.unpause(vmiRequest(h.vmi));
  const running = h.manager.tracker.snapshot();
  assert.equal(`${running?.state}/${running?.reason}/${running?.pausedByUser}`, 'Running/Unpaused/false');
  assert.equal(h.fake().calls[mid], 'resume');
  // Besides the lifecycle events' reads (getState), only the two calls — and, after the answer,
  // the guest clock's setting (see guest-clock.ts).
  assert.deepEqual(h.fake().calls.slice(from).filter((c) => c !== 'getState' && c !== 'setTime'), ['suspend', 'resume'], h.fake().calls.slice(from).join(', '));
});

test('the lifecycle event that confirms a pause or unpause is not read back; any other event is', async (t) => {
  const h = await harness(t);
  await h.cmd.sync(vmiRequest(h.vmi));
  await eventually(async () => (await h.cmd.getDomain({})).domain?.state === 'Running', { what: 'the domain running' });
  const fake = h.fake();
  const name = fake.name ?? '';
  const settled = async (): Promise<number> => {
    await h.manager.tracker.refresh();
    await new Promise((r) => setImmediate(r));
    return fake.calls.length;
  };
  await h.cmd.pause(vmiRequest(h.vmi));
  let from = await settled();
  // libvirt's event may come after the call's answer: the state it names is already published.
  fake.emit({ kind: 'lifecycle', domain: name, event: 'SUSPENDED', detail: 'PAUSED' });
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(fake.calls.slice(from), [], 'no read for a confirmed pause');
  await h.cmd.unpause(vmiRequest(h.vmi));
  from = await settled();
  fake.emit({ kind: 'lifecycle', domain: name, event: 'RESUMED', detail: 'UNPAUSED' });
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(fake.calls.slice(from).filter((c) => c !== 'setTime'), [], 'no read for a confirmed unpause');
  // An event that says something else (an I/O error paused the guest) is read from libvirt.
  fake.setState('PAUSED', 'IOERROR', ['SUSPENDED', 'IOERROR']);
  await eventually(() => h.manager.tracker.snapshot()?.reason === 'IOError', { what: 'the I/O error read back' });
  // And so is a pause event while the published state is not the user's pause.
  from = fake.calls.length;
  fake.emit({ kind: 'lifecycle', domain: name, event: 'SUSPENDED', detail: 'PAUSED' });
  await eventually(() => fake.calls.slice(from).includes('getState'), { what: 'a re-read' });
});

test('pause is idempotent, unpause of a running domain is accepted, and a stopped domain is refused by its state', async (t) => {
  const h = await harness(t);
  await h.cmd.sync(vmiRequest(h.vmi));
  await h.cmd.unpause(vmiRequest(h.vmi));
  assert.equal(h.fake().status?.state, 'RUNNING');
  await h.cmd.pause(vmiRequest(h.vmi));
  await h.cmd.pause(vmiRequest(h.vmi));
  assert.equal(h.fake().status?.state, 'PAUSED');
  // A guest paused by an I/O error and then by the user keeps the I/O error as its reason.
  h.fake().setState('PAUSED', 'IOERROR', ['SUSPENDED', 'IOERROR']);
  await h.cmd.pause(vmiRequest(h.vmi));
  await eventually(() => h.manager.tracker.snapshot()?.reason === 'IOError', { what: 'the I/O error reason kept' });
  assert.equal(h.manager.tracker.snapshot()?.pausedByUser, true);
  await h.cmd.unpause(vmiRequest(h.vmi));
  h.fake().setState('SHUTOFF', 'SHUTDOWN', ['STOPPED', 'SHUTDOWN']);
  await assert.rejects(h.cmd.pause(vmiRequest(h.vmi)), (e: Error) => /cannot pause a domain that is shutoff/.test(e.message));
  await assert.rejects(h.cmd.unpause(vmiRequest(h.vmi)), (e: Error) => /cannot unpause a domain that is shutoff/.test(e.message));
  assert.equal(h.manager.tracker.meta.pausedByUser, false, 'a refused pause leaves the mark as it was');
});

test('an unpause that resumed the guest sets its clock through the agent; a pause cancels it; an unpause of a running domain leaves it', async (t) => {
  let waited = 0;
  // The first second's wait, made instant and counted.
  const h = await harness(t, { clockWait: () => { waited++; return Promise.resolve(); } });
  await h.cmd.sync(vmiRequest(h.vmi));
  h.fake().agentConnected = true;
  await h.cmd.unpause(vmiRequest(h.vmi));
  await h.cmd.pause(vmiRequest(h.vmi));
  await h.cmd.unpause(vmiRequest(h.vmi));
  await eventually(() => h.fake().clockSets.length === 1, { what: 'the guest clock set once' });
  await h.manager.clock.close();
  assert.equal(waited, 1, 'the unpause of a running domain started no setting');
  assert.equal(h.fake().clockSets.length, 1);
});

test('a guest running again after a live migration\'s pause gets its clock set; other resumes are left to the unpause', async (t) => {
  let waited = 0;
  const h = await harness(t, { clockWait: () => { waited++; return Promise.resolve(); } });
  await h.cmd.sync(vmiRequest(h.vmi));
  h.fake().agentConnected = true;
  h.fake().setState('RUNNING', 'UNPAUSED', ['RESUMED', 'UNPAUSED']);
  h.fake().setState('RUNNING', 'MIGRATED', ['RESUMED', 'MIGRATED']);
  await eventually(() => h.fake().clockSets.length === 1, { what: 'the guest clock set after the switch-over' });
  h.fake().setState('RUNNING', 'POSTCOPY', ['RESUMED', 'POSTCOPY']);
  await eventually(() => h.fake().clockSets.length === 2, { what: 'the guest clock set once post-copy runs it here' });
  await h.manager.clock.close();
  assert.equal(waited, 2, 'a resume by anything but a migration started no setting');
});

test('a pause while the clock waits for its first try cancels it', async (t) => {
  let release: (() => void) | undefined;
  const h = await harness(t, { clockWait: (_ms, signal) => new Promise((resolve, reject) => {
    release = resolve;
    signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true });
  }) });
  await h.cmd.sync(vmiRequest(h.vmi));
  h.fake().agentConnected = true;
  await h.cmd.pause(vmiRequest(h.vmi));
  await h.cmd.unpause(vmiRequest(h.vmi));
  await eventually(() => release !== undefined, { what: 'the clock waiting' });
  await h.cmd.pause(vmiRequest(h.vmi));
  release?.();
  await h.manager.clock.close();
  assert.deepEqual(h.fake().clockSets, [], 'the paused guest\'s clock was not set');
});
