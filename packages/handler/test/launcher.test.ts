// The launcher side against FAKE LAUNCHERS: real grpc-js servers on real unix sockets in a temp
// dir laid out like the kubelet pods dir.
import assert from 'node:assert/strict';
import { access, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { status } from '@grpc/grpc-js';
import type { cmd } from '@podvirt/proto';
import { UNRESPONSIVE_MARKER } from '../src/ghost-records/unresponsive-marker.js';
import { isHandlerError } from '../src/handler-error.js';
import { LauncherClient } from '../src/launcher/launcher-client.js';
import { LauncherRegistry } from '../src/launcher/launcher-registry.js';
import { LauncherState } from '../src/launcher/launcher-state.js';
import { discoverLauncherSocket } from '../src/launcher/socket-discovery.js';
import { FakeLauncher, type FakeLauncherOptions } from './fake-launcher.js';
import { makeVmi, NODE, quietLog } from './fixtures.js';
import { eventually } from '@podvirt/test-support';

// Unix socket paths are limited to 108 bytes: keep the temp dir and pod UIDs short.
async function podsDir(t: TestContext): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'pvh-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

async function fake(t: TestContext, o: FakeLauncherOptions): Promise<FakeLauncher> {
  const f = await FakeLauncher.start(o);
  t.after(() => f.close());
  return f;
}

const FAST = { shortMs: 300, longMs: 1_000 };

function registry(t: TestContext, dir: string, extra: { now?: () => number; watchdogMs?: number } = {}) {
  const changes: string[] = [];
  const notices: cmd.Notice[] = [];
  const reg = new LauncherRegistry({
    nodeName: NODE,
    podsDir: dir,
    log: quietLog(),
    now: extra.now ?? Date.now,
    watchdogMs: extra.watchdogMs ?? 30_000,
    timeouts: FAST,
    reconnectBaseMs: 20,
    onChange: (key) => changes.push(key),
    onNotice: (_key, _uid, n) => notices.push(n),
  });
  t.after(() => reg.close());
  return { reg, changes, notices };
}

const target = (vmi = makeVmi()) => ({ uid: vmi.metadata.uid ?? '', key: 'default/vm1', vmi });

test('discovery: no pod, waiting pod dir, exactly one socket, more than one', async (t) => {
  const dir = await podsDir(t);
  const vmi = makeVmi();
  vmi.status = { activePods: { p1: NODE, p2: NODE, p3: 'other-node' } };
  assert.deepEqual(await discoverLauncherSocket(vmi, NODE, dir), { kind: 'no-pod' });
  await mkdir(join(dir, 'p1'));
  assert.deepEqual(await discoverLauncherSocket(vmi, NODE, dir), { kind: 'waiting', podUids: ['p1'] });
  const one = await fake(t, { podsDir: dir, podUid: 'p1' });
  assert.deepEqual(await discoverLauncherSocket(vmi, NODE, dir), { kind: 'found', podUid: 'p1', path: one.path });
  await fake(t, { podsDir: dir, podUid: 'p3' });
  assert.equal((await discoverLauncherSocket(vmi, NODE, dir)).kind, 'found', 'a pod on another node does not count');
  await fake(t, { podsDir: dir, podUid: 'p2' });
  assert.equal((await discoverLauncherSocket(vmi, NODE, dir)).kind, 'ambiguous');
});

test('connect negotiates and reads the domain in one round trip; no common version is refused and the channel closed', async (t) => {
  const dir = await podsDir(t);
  const good = await fake(t, { podsDir: dir, podUid: 'p1' });
  const { client, domain } = await LauncherClient.connect(good.path, { timeouts: FAST });
  t.after(() => client.close());
  assert.equal(client.version, 1);
  assert.deepEqual([...good.calls].sort(), ['GetDomain', 'Info'], 'both asked at once, nothing else');
  assert.equal(domain, undefined, 'no domain before the first Sync');

  const future = await fake(t, { podsDir: dir, podUid: 'p2', versions: [7, 8] });
  await assert.rejects(LauncherClient.connect(future.path, { timeouts: FAST }), (err) => isHandlerError(err, 'HANDLER_ERR_LAUNCHER_INCOMPATIBLE'));
  // Asked together, but the version is judged first: a launcher that no longer serves this
  // GetDomain is still named incompatible; a compatible one whose GetDomain fails says so.
  const gone = { code: status.UNIMPLEMENTED, details: 'unknown method GetDomain' };
  const newer = await fake(t, { podsDir: dir, podUid: 'p3', versions: [7, 8], getDomainError: gone });
  await assert.rejects(LauncherClient.connect(newer.path, { timeouts: FAST }), (err) => isHandlerError(err, 'HANDLER_ERR_LAUNCHER_INCOMPATIBLE'));
  const broken = await fake(t, { podsDir: dir, podUid: 'p4', getDomainError: { code: status.INTERNAL, details: 'libvirt is gone' } });
  await assert.rejects(LauncherClient.connect(broken.path, { timeouts: FAST }), (err) => !isHandlerError(err, 'HANDLER_ERR_LAUNCHER_INCOMPATIBLE') && /libvirt is gone/.test(String(err)));
});

test('gRPC status codes become typed errors; deadline and abort cancel the call', async (t) => {
  const dir = await podsDir(t);
  const f = await fake(t, { podsDir: dir, podUid: 'p1', syncError: { code: status.INVALID_ARGUMENT, details: 'spec.domain.cpu.cores: Invalid value: 0' } });
  const { client } = await LauncherClient.connect(f.path, { timeouts: FAST });
  t.after(() => client.close());
  await assert.rejects(client.sync(Buffer.from('{}')), (err) => {
    assert.ok(isHandlerError(err, 'HANDLER_ERR_INVALID_VMI'));
    assert.equal(err.grpcCode, status.INVALID_ARGUMENT);
    assert.match(err.message, /spec\.domain\.cpu\.cores/);
    return true;
  });
  // The launcher's own code in the trailer tells a volume it cannot prepare from other preconditions.
  const volume = 'spec.volumes[0].emptyDisk.capacity: 1125899906842624 bytes is larger than the pod\'s filesystem can hold';
  f.options.syncError = { code: status.FAILED_PRECONDITION, details: volume, launcherCode: 'LAUNCHER_ERR_VOLUME' };
  await assert.rejects(client.sync(Buffer.from('{}')), (err) => isHandlerError(err, 'HANDLER_ERR_LAUNCHER_VOLUME') && err.message.includes(volume));
  f.options.syncError = { code: status.FAILED_PRECONDITION, details: 'spec.domain.cpu.model: not on this node', launcherCode: 'LAUNCHER_ERR_NODE_LACKS' };
  await assert.rejects(client.sync(Buffer.from('{}')), (err) => isHandlerError(err, 'HANDLER_ERR_LAUNCHER_PRECONDITION'));
  f.options.syncError = { code: status.FAILED_PRECONDITION, details: 'no trailer' };
  await assert.rejects(client.sync(Buffer.from('{}')), (err) => isHandlerError(err, 'HANDLER_ERR_LAUNCHER_PRECONDITION'));
  f.hang();
  await assert.rejects(client.ping(), (err) => isHandlerError(err, 'HANDLER_ERR_LAUNCHER_TIMEOUT'));
  const ac = new AbortController();
  const pending = client.getDomain(ac.signal);
  ac.abort();
  await assert.rejects(pending, (err) => isHandlerError(err, 'HANDLER_ERR_ABORTED'));
  f.resume();
});

test('the registry connects once, seeds the cache from GetDomain and follows WatchDomain', async (t) => {
  const dir = await podsDir(t);
  const f = await fake(t, { podsDir: dir, podUid: 'p1' });
  f.setDomain({ state: 'Running', reason: 'Booted' });
  const { reg, changes, notices } = registry(t, dir);
  const [a, b] = await Promise.all([reg.observe(target()), reg.observe(target())]);
  assert.equal(a.state, LauncherState.Ready);
  assert.equal(b.connection, a.connection, 'single flight: one connection per VMI UID');
  assert.equal(f.calls.filter((c) => c === 'Info').length, 1);
  assert.equal(a.domain?.state, 'Running');

  await eventually(() => f.openStreams === 1);
  f.setDomain({ state: 'Paused', reason: 'User', pausedByUser: true });
  await eventually(() => reg.cache.get('uid-1')?.domain?.state === 'Paused');
  assert.ok(changes.includes('default/vm1'));
  f.notice('Warning', 'GuestPanicked', 'guest panicked');
  await eventually(() => notices.length === 1);
  assert.deepEqual(notices[0], { type: 'Warning', reason: 'GuestPanicked', message: 'guest panicked' });

  // A broken stream is re-opened with backoff and catches up with the current domain.
  f.breakStreams();
  f.setDomain({ state: 'Running', reason: 'Unpaused', pausedByUser: false });
  await eventually(() => f.openStreams === 1 && reg.cache.get('uid-1')?.domain?.state === 'Running');

  await reg.release('uid-1');
  await eventually(() => f.openStreams === 0);
  assert.equal(reg.cache.get('uid-1'), undefined);
});

test('a launcher that stops answering is declared gone after the watchdog timeout', async (t) => {
  const dir = await podsDir(t);
  const f = await fake(t, { podsDir: dir, podUid: 'p1' });
  f.setDomain({ state: 'Running', reason: 'Booted' });
  const { reg, changes } = registry(t, dir, { watchdogMs: 600 });
  assert.equal((await reg.observe(target())).state, LauncherState.Ready);
  const started = Date.now();
  f.hang();
  await eventually(() => changes.length > 0, { deadlineMs: 5_000 });
  const observed = await reg.observe(target());
  assert.equal(observed.state, LauncherState.Unresponsive);
  const elapsed = Date.now() - started;
  assert.ok(elapsed >= 550, `declared gone after ${elapsed} ms, not before the watchdog period`);
  assert.equal(observed.domain?.state, 'Running', 'the last domain is kept; decide() treats it as gone');
  f.resume();
  await eventually(async () => (await reg.observe(target())).state === LauncherState.Ready, { deadlineMs: 5_000 });
});

test('a stalled handler does not blame a healthy launcher: silence by its own clock is confirmed by a fresh call first', async (t) => {
  const dir = await podsDir(t);
  const f = await fake(t, { podsDir: dir, podUid: 'p1' });
  f.setDomain({ state: 'Running', reason: 'Booted' });
  let now = Date.now();
  const { reg } = registry(t, dir, { now: () => now, watchdogMs: 30_000 });
  assert.equal((await reg.observe(target())).state, LauncherState.Ready);
  // The handler was stopped for 40 s: its last contact is stale, the launcher never was.
  now += 40_000;
  const observed = await reg.observe(target());
  assert.equal(observed.state, LauncherState.Ready, 'a launcher that answers now is not gone');
  assert.equal(observed.gone, undefined);
  await assert.rejects(access(join(dirname(f.path), UNRESPONSIVE_MARKER)), 'no unresponsive marker');
  assert.ok(f.calls.includes('Ping'), 'asked with a fresh call');
});

test('a stalled handler that restarts its dial does not count its own stall as the launcher\'s silence', async (t) => {
  const dir = await podsDir(t);
  const f = await fake(t, { podsDir: dir, podUid: 'p1' });
  let now = Date.now();
  const { reg } = registry(t, dir, { now: () => now, watchdogMs: 30_000 });
  f.hang();
  assert.equal((await reg.observe(target())).state, LauncherState.Unreachable);
  now += 40_000; // stalled between two attempts
  assert.equal((await reg.observe(target())).state, LauncherState.Unreachable, 'one failed attempt after a stall is no verdict');
  f.resume();
  assert.equal((await reg.observe(target())).state, LauncherState.Ready);
});

test('a launcher that exited (socket refuses connections) is gone at once, without the watchdog, also for a new handler', async (t) => {
  const dir = await podsDir(t);
  const f = await fake(t, { podsDir: dir, podUid: 'p1' });
  f.setDomain({ state: 'Running', reason: 'Booted' });
  const { reg, changes } = registry(t, dir, { watchdogMs: 30_000 });
  assert.equal((await reg.observe(target())).state, LauncherState.Ready);
  await f.exit();
  await eventually(() => changes.length > 0, { deadlineMs: 3_000 });
  const observed = await reg.observe(target());
  assert.equal(observed.state, LauncherState.Unresponsive);
  // Stopping the in-process server unlinks its path for a moment before the stale socket takes it.
  assert.ok(observed.gone === 'connection-refused' || observed.gone === 'socket-removed', String(observed.gone));

  // A handler restarted before the verdict was written down reaches it on its own.
  await rm(join(dirname(f.path), UNRESPONSIVE_MARKER));
  const restarted = registry(t, dir, { watchdogMs: 30_000 });
  const seen = await restarted.reg.observe(target());
  assert.equal(seen.state, LauncherState.Unresponsive, 'a restarted handler reaches the same verdict');
  assert.equal(seen.gone, 'connection-refused');
});

test('a socket that vanishes makes the launcher gone at once', async (t) => {
  const dir = await podsDir(t);
  const f = await fake(t, { podsDir: dir, podUid: 'p1' });
  const { reg } = registry(t, dir, { watchdogMs: 300 });
  assert.equal((await reg.observe(target())).state, LauncherState.Ready);
  await f.close();
  await eventually(async () => (await reg.observe(target())).state === LauncherState.Unresponsive, { deadlineMs: 3_000 });
});

test('a pod dir without a socket gets 3 minutes to initialise (injected clock)', async (t) => {
  const dir = await podsDir(t);
  await mkdir(join(dir, 'p1'));
  let now = 1_000_000;
  const { reg } = registry(t, dir, { now: () => now });
  assert.equal((await reg.observe(target())).state, LauncherState.Initializing);
  now += 179_000;
  assert.equal((await reg.observe(target())).state, LauncherState.Initializing);
  now += 1_000;
  assert.equal((await reg.observe(target())).state, LauncherState.Unresponsive);
  const gone = makeVmi();
  gone.status = { activePods: {} };
  assert.equal((await reg.observe({ uid: 'uid-2', key: 'default/vm2', vmi: gone })).state, LauncherState.Unresponsive, 'no pod at all');
});
