import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { TestContext } from 'node:test';
import { promisify } from 'node:util';
import { processesInMountNamespace } from '../container/mount-namespace.js';
import { guestDomainXml } from '../guest/guest-domain-xml.js';
import { guestImage } from '../guest/guest-image.js';
import { startLibvirtDaemon } from './start-libvirt-daemon.js';

const run = promisify(execFile);

async function virsh(uri: string, ...args: string[]): Promise<string> {
  return (await run('virsh', ['-q', '-c', uri, ...args], { timeout: 30_000 })).stdout;
}

async function tempDir(t: TestContext): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'podvirt-libvirtd-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

async function comm(pid: number): Promise<string> {
  return (await readFile(`/proc/${pid}/comm`, 'utf8').catch(() => '')).trim();
}

void test('close() ends a running qemu with the daemon and leaves nothing behind', async (t) => {
  const dir = await tempDir(t);
  const daemon = await startLibvirtDaemon({ stateDir: join(dir, 'state') });
  t.after(() => daemon.close());
  assert.equal(await comm(daemon.pid), daemon.kind);
  assert.match(await virsh(daemon.uri, 'version'), /Running hypervisor: QEMU/);

  const image = guestImage();
  await copyFile(image.dataDisk, join(dir, 'data.ext4'));
  const xml = guestDomainXml({
    name: 'leak-check',
    image,
    dataDisk: join(dir, 'data.ext4'),
    serialSocket: join(dir, 'serial0'),
    serialLog: join(dir, 'serial0.log'),
  });
  await writeFile(join(dir, 'domain.xml'), xml);
  await virsh(daemon.uri, 'create', join(dir, 'domain.xml'));
  const members = await processesInMountNamespace(daemon.container.mountNamespace);
  const names = await Promise.all(members.map(comm));
  const qemu = members.filter((_, i) => names[i]?.startsWith('qemu-system'));
  assert.equal(qemu.length, 1, `one qemu in the daemon's namespace, found: ${names.join(', ')}`);

  await daemon.close();
  await daemon.close(); // idempotent
  assert.deepEqual(await processesInMountNamespace(daemon.container.mountNamespace), []);
  for (const pid of [...qemu, daemon.pid, daemon.container.pid]) {
    assert.ok(!existsSync(`/proc/${pid}`) || (await readFile(`/proc/${pid}/stat`, 'utf8')).includes(') Z '), `pid ${pid} alive`);
  }
  assert.ok(!existsSync(daemon.socketPath), 'socket left behind');
  assert.ok(!(await readFile('/proc/self/mountinfo', 'utf8')).includes(dir), 'mount left behind');
});

void test('a daemon that cannot start fails with its own output', async (t) => {
  const stateDir = join(await tempDir(t), 'state');
  await assert.rejects(startLibvirtDaemon({ stateDir, settings: { max_clients: 'lots' } }), (err: Error & { code?: string }) => {
    assert.equal(err.code, 'PODVIRT_LIBVIRTD_START_FAILED');
    assert.match(err.message, /expected an unsigned integer for 'max_clients'/);
    return true;
  });
  assert.ok(!(await readFile('/proc/self/mountinfo', 'utf8')).includes(stateDir), 'mount left behind');
});

void test('a second daemon on a busy state dir is refused and the first is not disturbed', async (t) => {
  const stateDir = join(await tempDir(t), 'state');
  const first = await startLibvirtDaemon({ stateDir });
  t.after(() => first.close());
  await assert.rejects(startLibvirtDaemon({ stateDir }), { code: 'PODVIRT_LIBVIRTD_START_FAILED' });
  assert.match(await virsh(first.uri, 'version'), /Running hypervisor: QEMU/);
});

void test('kill() ends the daemon and its container', async (t) => {
  const daemon = await startLibvirtDaemon({ stateDir: join(await tempDir(t), 'state') });
  t.after(() => daemon.close());
  daemon.kill('SIGKILL');
  const exit = await daemon.container.exited;
  // The init exits 137; a container reports a PID 1 status above 128 as that signal.
  assert.deepEqual(exit, { code: null, signal: 'SIGKILL' });
  await daemon.close();
  assert.ok(!existsSync(daemon.socketPath), 'a killed daemon\'s socket is removed on close');
});
