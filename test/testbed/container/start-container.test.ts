import assert from 'node:assert/strict';
import { access, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { test } from 'node:test';
import type { TestContext } from 'node:test';
import { MEMORY_CGROUP_ROOT, TESTBED_CGROUP_PARENT } from './memory-cgroup.js';
import { processesInMountNamespace } from './mount-namespace.js';
import { startContainer } from './start-container.js';
import type { Container } from './start-container.js';

async function tempDir(t: TestContext): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'podvirt-container-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** Collects a stream and resolves the first `n` lines once they have arrived. */
function lines(stream: Readable): (n: number) => Promise<string[]> {
  let text = '';
  stream.on('data', (chunk: Buffer) => {
    text += chunk.toString();
  });
  return async (n) => {
    for (let i = 0; i < 200; i++) {
      const got = text.split('\n').slice(0, -1);
      if (got.length >= n) return got.slice(0, n);
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error(`timed out waiting for ${n} lines, have: ${JSON.stringify(text)}`);
  };
}

async function processState(pid: number): Promise<string | undefined> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  } catch {
    return undefined;
  }
}

/** Gone, or a zombie (dead; reaping orphans is the host PID 1's job). */
async function assertDead(pid: number): Promise<void> {
  const state = await processState(pid);
  assert.ok(state === undefined || state === 'Z', `pid ${pid} still alive (state ${String(state)})`);
}

async function assertNoTrace(c: Container, stateDir: string): Promise<void> {
  assert.deepEqual(await processesInMountNamespace(c.mountNamespace), []);
  const mountinfo = await readFile('/proc/self/mountinfo', 'utf8');
  assert.ok(!mountinfo.includes(stateDir), 'a container mount leaked into the host namespace');
}

void test('mount namespace: private libvirt dirs, binds, accounts; stop leaves nothing', async (t) => {
  const dir = await tempDir(t);
  const stateDir = join(dir, 'state');
  await mkdir(join(dir, 'data'));
  await writeFile(join(dir, 'data', 'hello'), 'from the host\n');
  const c = await startContainer({
    stateDir,
    binds: [{ source: join(dir, 'data'), target: join(dir, 'mnt'), readOnly: true }],
    command: ['sh', '-c', `sleep 300 & echo $!; cat ${join(dir, 'mnt', 'hello')}; grep -c '^libvirt-qemu:' /etc/passwd;
      echo inside > /etc/libvirt/marker; touch ${join(dir, 'mnt', 'x')} 2>/dev/null || echo read-only; exec sleep 300`],
  });
  t.after(() => c.stop({ graceMs: 100 }));
  const [bgPid, hello, accounts, ro] = await lines(c.stdout)(4);
  assert.equal(hello, 'from the host');
  assert.equal(accounts, '1');
  assert.equal(ro, 'read-only');
  assert.equal(await readFile(join(stateDir, 'etc', 'marker'), 'utf8'), 'inside\n');

  const inside = await readFile(`/proc/${c.pid}/mountinfo`, 'utf8');
  for (const target of ['/etc/libvirt', '/run/libvirt', '/var/lib/libvirt', '/var/log/libvirt', '/var/cache/libvirt', '/etc/passwd']) {
    assert.match(inside, new RegExp(` ${target} `), `${target} not mounted inside`);
  }
  const host = await readFile('/proc/self/mountinfo', 'utf8');
  assert.ok(!host.includes(join(dir, 'mnt')), 'bind mount visible on the host');
  assert.deepEqual((await processesInMountNamespace(c.mountNamespace)).sort(), [c.pid, Number(bgPid)].sort());

  const exit = await c.stop({ graceMs: 2000 });
  assert.equal(exit.signal, 'SIGTERM');
  await assertDead(c.pid);
  await assertDead(Number(bgPid));
  await assertNoTrace(c, stateDir);
});

void test('pid namespace: the command is PID 1 and stop escalates to SIGKILL', async (t) => {
  const stateDir = join(await tempDir(t), 'state');
  // PID 1 without a SIGTERM handler ignores SIGTERM, as in a real pod.
  const c = await startContainer({ stateDir, pidNamespace: true, command: ['sh', '-c', 'echo $$; sleep 300 & echo $!; wait'] });
  t.after(() => c.stop({ graceMs: 100 }));
  const [self, child] = await lines(c.stdout)(2);
  assert.equal(self, '1');
  assert.notEqual(Number(child), 1);
  const status = await readFile(`/proc/${c.pid}/status`, 'utf8');
  assert.match(status, new RegExp(`^NSpid:\\s+${c.pid}\\s+1$`, 'm'));
  // unshare itself (waiting for PID 1), the shell and its sleep.
  const members = await processesInMountNamespace(c.mountNamespace);
  assert.ok(members.includes(c.pid));
  assert.equal(members.length, 3);

  const started = Date.now();
  const exit = await c.stop({ graceMs: 300 });
  assert.ok(Date.now() - started >= 300, 'SIGTERM should not have stopped PID 1');
  assert.equal(exit.signal, 'SIGKILL');
  await assertDead(c.pid);
  await assertNoTrace(c, stateDir);
});

for (const pidNamespace of [false, true]) {
  void test(`a main process that exits on its own takes its daemonized children with it (pid namespace: ${pidNamespace})`, async (t) => {
    const stateDir = join(await tempDir(t), 'state');
    const c = await startContainer({ stateDir, pidNamespace, command: ['sh', '-c', 'sleep 300 & echo $!; exit 3'] });
    t.after(() => c.stop({ graceMs: 100 }));
    const [bgPid] = await lines(c.stdout)(1);
    assert.deepEqual(await c.exited, { code: 3, signal: null });
    if (!pidNamespace) await assertDead(Number(bgPid)); // inside a PID namespace it is not a host pid
    await assertNoTrace(c, stateDir);
  });
}

void test('an aborted signal stops the container', async (t) => {
  const stateDir = join(await tempDir(t), 'state');
  const ac = new AbortController();
  const c = await startContainer({ stateDir, signal: ac.signal, command: ['sleep', '300'] });
  t.after(() => c.stop({ graceMs: 100 }));
  ac.abort();
  assert.deepEqual(await c.exited, { code: null, signal: 'SIGTERM' });
  await assertNoTrace(c, stateDir);
});

void test('a failing bind mount rejects the start with the mount error', async (t) => {
  const dir = await tempDir(t);
  await assert.rejects(
    startContainer({
      stateDir: join(dir, 'state'),
      binds: [{ source: join(dir, 'missing'), target: join(dir, 'target') }],
      command: ['true'],
    }),
    (err: Error & { code?: string }) => {
      assert.equal(err.code, 'PODVIRT_CONTAINER_START_FAILED');
      assert.match(err.message, /mount/);
      return true;
    },
  );
});

void test('memory limit: the container runs in its own memory cgroup; an OOM kill is reported and the group removed', async (t) => {
  const dir = await tempDir(t);
  const cgroupName = `test-${process.pid}-${Date.now()}`;
  const limitBytes = 32 * 1024 * 1024;
  // `tail -n 1` keeps the whole newline-free stream in memory: it grows until the kernel stops it.
  const c = await startContainer({
    command: ['/bin/sh', '-c', 'grep memory /proc/self/cgroup; cat /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null; exec tail -n 1 /dev/zero'],
    stateDir: join(dir, 'state'),
    pidNamespace: true,
    memory: { cgroupName, limitBytes },
  });
  t.after(() => c.stop({ graceMs: 100 }).catch(() => undefined));
  const out = lines(c.stdout);
  const [cgroupLine] = await out(1);
  assert.match(cgroupLine ?? '', new RegExp(`memory:/${TESTBED_CGROUP_PARENT}/${cgroupName}$`));
  const exit = await c.exited;
  assert.equal(exit.signal, 'SIGKILL');
  assert.equal(exit.oomKilled, true);
  await assert.rejects(access(join(MEMORY_CGROUP_ROOT, TESTBED_CGROUP_PARENT, cgroupName)), 'the cgroup is removed with the container');
});

void test('memory limit: a container that stays within it ends normally, not OOMKilled, and leaves no cgroup', async (t) => {
  const dir = await tempDir(t);
  const cgroupName = `test-${process.pid}-${Date.now()}-ok`;
  const c = await startContainer({ command: ['/bin/true'], stateDir: join(dir, 'state'), pidNamespace: true, memory: { cgroupName, limitBytes: 64 * 1024 * 1024 } });
  const exit = await c.exited;
  assert.deepEqual(exit, { code: 0, signal: null, oomKilled: false });
  await assert.rejects(access(join(MEMORY_CGROUP_ROOT, TESTBED_CGROUP_PARENT, cgroupName)));
});

void test('devices: a private /dev with the standard nodes and exactly the given device nodes; the host /dev is untouched', async (t) => {
  const dir = await tempDir(t);
  const stateDir = join(dir, 'state');
  const c = await startContainer({
    command: ['/bin/sh', '-c', 'for p in /dev/null /dev/urandom /dev/kvm /dev/net/tun /dev/vhost-net; do [ -c $p ] && echo "have $p"; done; echo x > /dev/null && echo wrote; [ -d /dev/pts ] && echo pts; echo end; sleep 60'],
    stateDir,
    pidNamespace: true,
    devices: [{ path: '/dev/net/tun', type: 'c', major: 10, minor: 200, mode: 0o600 }],
  });
  t.after(() => c.stop({ graceMs: 100 }));
  const out = lines(c.stdout);
  assert.deepEqual(await out(6), ['have /dev/null', 'have /dev/urandom', 'have /dev/net/tun', 'wrote', 'pts', 'end']);
  await c.stop({ graceMs: 100 });
  await assertNoTrace(c, stateDir);
  await access('/dev/null');
});
