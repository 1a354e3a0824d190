// The daemon supervisor with a stand-in daemon on a real unix socket (restart after a kill,
// stderr re-emitted as JSON, clean stop), plus the generated configs and the caps cache seed.
import assert from 'node:assert/strict';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { eventually } from '@podvirt/test-support';
import { pino } from 'pino';
import { seedCapsCache } from '../src/daemon/caps-cache.js';
import { LIBVIRTD, VIRTQEMUD, daemonConf, parseDaemonChoice, pickDaemon, qemuConf, qemuOnlyDriverModule } from '../src/daemon/daemon-config.js';
import { DaemonSupervisor } from '../src/daemon/daemon-supervisor.js';
import { startDaemon } from '../src/daemon/start-daemon.js';
import { LauncherError } from '../src/errors.js';
import { parseLibvirtLogLine } from '../src/logs/libvirt-log-line.js';

const FAKE = fileURLToPath(new URL('../../test/fixtures/fake-daemon.mjs', import.meta.url));

function alive(pid: number): boolean {
  try { process.kill(pid, 0); return true; } catch { return false; }
}

// The restart delay is the supervisor's timer; no assertion here reads the clock, because
// a loaded machine stretches any wall-clock bound (this test failed 2 runs in 5 on one).
test('restarts a killed daemon and stops it cleanly', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'podvirt-daemon-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const socketPath = join(dir, 'libvirt-sock');
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({ write(chunk: Buffer, _enc, cb) { lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>); cb(); } });
  const fromDaemon = (): Record<string, unknown>[] => lines.filter((l) => l['subcomponent'] === 'libvirt');
  const restarts: number[] = [];
  const sup = new DaemonSupervisor({
    command: process.execPath, args: [FAKE, socketPath], socketPath, log: pino(sink), restartDelayMs: 50, onRestart: (pid) => restarts.push(pid),
  });
  t.after(() => sup.close());
  await sup.start();
  // The socket accepts before the daemon's first log line is out: killing it earlier lost that
  // line, the cause of the flakes.
  await eventually(() => fromDaemon().length >= 1, { deadlineMs: 10_000, what: "the first daemon's log line" });
  const first = sup.pid!;
  process.kill(first, 'SIGKILL');
  await eventually(() => restarts.length > 0, { deadlineMs: 10_000, what: 'a restarted daemon' });
  const second = restarts[0] ?? assert.fail('no restart pid');
  await sup.waitForSocket();
  await eventually(() => fromDaemon().length >= 2, { deadlineMs: 10_000, what: "the second daemon's log line" });
  assert.notEqual(second, first);
  assert.equal(sup.pid, second);
  await sup.close();
  await sup.close();
  assert.equal(alive(second), false);
  assert.equal(sup.restarts, 1);
  assert.equal(fromDaemon()[0]?.['pos'], 'fakeDaemon:1');
  assert.equal(fromDaemon()[0]?.['level'], 50);
});

test('config: unix socket only, 0700, logs to stderr; qemu.conf without cgroups, namespaces, security driver, virtlogd', () => {
  const conf = daemonConf(LIBVIRTD, '/run/libvirt', 3);
  for (const want of ['unix_sock_dir = "/run/libvirt"', 'unix_sock_rw_perms = "0700"', 'log_outputs = "3:stderr"', 'listen_tcp = 0', 'listen_tls = 0']) assert.ok(conf.includes(want), want);
  assert.ok(!daemonConf(VIRTQEMUD, '/run/libvirt', 3).includes('listen_tcp'), 'virtqemud has no listen options');
  const q = qemuConf();
  for (const want of ['stdio_handler = "file"', 'security_driver = "none"', 'namespaces = [ ]', 'cgroup_controllers = [ ]']) assert.ok(q.includes(want), want);
  // virtqemud by default; libvirtd only when PODVIRT_LIBVIRT_DAEMON=libvirtd asks, never in place of a missing virtqemud.
  assert.equal(pickDaemon(() => true), VIRTQEMUD);
  assert.throws(() => pickDaemon((p) => p === LIBVIRTD.binary), (err: unknown) => err instanceof LauncherError && err.code === 'LAUNCHER_ERR_DAEMON'
    && /no virtqemud: \/usr\/sbin\/virtqemud does not exist and PODVIRT_VIRTQEMUD names none .*PODVIRT_LIBVIRT_DAEMON=libvirtd/.test(err.message));
  assert.equal(pickDaemon(() => true, 'libvirtd'), LIBVIRTD);
  assert.throws(() => pickDaemon((p) => p === VIRTQEMUD.binary, 'libvirtd'), /PODVIRT_LIBVIRT_DAEMON=libvirtd, but \/usr\/sbin\/libvirtd does not exist/);
  // A virtqemud built outside /usr/sbin (PODVIRT_VIRTQEMUD) runs as virtqemud; a wrong path is refused, not replaced.
  const built = '/var/cache/podvirt/virtqemud/9.0.0/sbin/virtqemud';
  const kind = pickDaemon((p) => p === built || p === LIBVIRTD.binary, 'virtqemud', built);
  assert.deepEqual([kind.binary, kind.configName, kind.socketName], [built, 'virtqemud.conf', 'virtqemud-sock']);
  assert.equal(pickDaemon(() => true, 'virtqemud', built).binary, built, 'the one named wins over /usr/sbin/virtqemud');
  assert.ok(!daemonConf(kind, '/run/libvirt', 3).includes('listen_tcp'), 'a built virtqemud has no listen options either');
  assert.throws(() => pickDaemon((p) => p === LIBVIRTD.binary || p === VIRTQEMUD.binary, 'virtqemud', '/nowhere/virtqemud'), /PODVIRT_VIRTQEMUD names \/nowhere\/virtqemud, which does not exist/);
  assert.equal(pickDaemon(() => true, 'libvirtd', built), LIBVIRTD, 'the fallback, when asked, ignores PODVIRT_VIRTQEMUD');
  // PODVIRT_LIBVIRT_DAEMON: the two names, unset or empty for virtqemud; a typo is refused, naming the variable.
  assert.deepEqual([undefined, '', 'virtqemud', 'libvirtd'].map(parseDaemonChoice), ['virtqemud', 'virtqemud', 'virtqemud', 'libvirtd']);
  assert.throws(() => parseDaemonChoice('libvirt'), (err: unknown) => err instanceof LauncherError && err.code === 'LAUNCHER_ERR_DAEMON'
    && /PODVIRT_LIBVIRT_DAEMON="libvirt": expected virtqemud \(the default\) or libvirtd/.test(err.message));
  // libvirtd gets the QEMU driver module alone, found where the distribution installed it.
  assert.equal(qemuOnlyDriverModule((p) => p === '/usr/lib64/libvirt/connection-driver/libvirt_driver_qemu.so'), '/usr/lib64/libvirt/connection-driver/libvirt_driver_qemu.so');
  assert.equal(qemuOnlyDriverModule(() => false), undefined);
});

// One malloc arena for the daemon: a stand-in virtqemud (PODVIRT_VIRTQEMUD's path) started the
// launcher's way records the config and the environment it was given.
test('startDaemon: virtqemud gets its config and MALLOC_ARENA_MAX=1', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'podvirt-start-daemon-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const dirs = { etc: join(dir, 'etc'), run: join(dir, 'run'), cache: join(dir, 'cache'), log: join(dir, 'log'), lib: join(dir, 'lib') };
  await mkdir(dirs.run, { recursive: true });
  const fake = join(dir, 'virtqemud');
  // -f <config> -p <pidfile>, as startDaemon passes them.
  await writeFile(fake, `#!/bin/sh\nprintf '%s' "$MALLOC_ARENA_MAX" > ${join(dir, 'arenas')}\ncp "$2" ${join(dir, 'seen.conf')}\n`
    + `exec ${JSON.stringify(process.execPath)} ${JSON.stringify(FAKE)} ${JSON.stringify(join(dirs.run, VIRTQEMUD.socketName))}\n`);
  await chmod(fake, 0o755);
  const ac = new AbortController();
  const started = await startDaemon(dirs, undefined, pino({ level: 'silent' }), ac.signal, 'virtqemud', fake);
  t.after(() => started.supervisor.close());
  assert.equal(started.kind.binary, fake);
  assert.equal(await readFile(join(dir, 'arenas'), 'utf8'), '1');
  const conf = await readFile(join(dir, 'seen.conf'), 'utf8');
  assert.equal(conf, daemonConf(VIRTQEMUD, dirs.run, 3));
});

test('caps cache: copies only *.xml, tolerates a missing source', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'podvirt-caps-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  await mkdir(join(dir, 'from'));
  await writeFile(join(dir, 'from', 'a.xml'), '<qemuCaps/>');
  await writeFile(join(dir, 'from', 'notes.txt'), 'x');
  assert.equal(await seedCapsCache(join(dir, 'from'), join(dir, 'to', 'capabilities')), 1);
  assert.deepEqual(await readdir(join(dir, 'to', 'capabilities')), ['a.xml']);
  assert.equal(await seedCapsCache(join(dir, 'missing'), join(dir, 'to2')), 0);
  assert.equal(await seedCapsCache(undefined, join(dir, 'to3')), 0);
});

test('libvirt log lines keep level, thread and position', () => {
  assert.deepEqual(parseLibvirtLogLine('2026-11-21 06:40:01.123+0000: 4242: warning : virFoo:12 : no dnsmasq'), {
    level: 'warn', msg: 'no dnsmasq', thread: '4242', pos: 'virFoo:12', timestamp: '2026-11-21 06:40:01.123+0000',
  });
  assert.deepEqual(parseLibvirtLogLine('plain text'), { level: 'info', msg: 'plain text' });
});
