import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import { guestDomainXml, guestImage, processesInMountNamespace, startLibvirtDaemon, waitForConsoleText } from '../testbed/index.js';
import { virsh } from './smoke-virsh.js';

/** Pids of live qemu processes started for domain `name` (libvirt passes `-name guest=<name>,…`). */
async function qemuPidsOf(name: string): Promise<number[]> {
  const pids = (await readdir('/proc')).filter((p) => /^\d+$/.test(p));
  const cmdlines = await Promise.all(
    pids.map((p) => readFile(`/proc/${p}/cmdline`, 'utf8').catch(() => '')),
  );
  return pids.filter((_, i) => cmdlines[i]?.includes(`guest=${name},`)).map(Number);
}

async function agentPing(uri: string, name: string): Promise<string> {
  // The agent connects around the time the ready marker prints; give it a few tries.
  for (let i = 0; ; i++) {
    try {
      return await virsh(uri, 'qemu-agent-command', name, '{"execute":"guest-ping"}');
    } catch (err) {
      if (i >= 20) throw err;
      await sleep(250);
    }
  }
}

void test('smoke: the guest boots under a test libvirt daemon, and nothing is left afterwards', async (t) => {
  const image = guestImage();
  const dir = await mkdtemp(join(tmpdir(), 'podvirt-smoke-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const daemonAt = performance.now();
  const daemon = await startLibvirtDaemon({ stateDir: join(dir, 'daemon') });
  t.after(() => daemon.close());
  const since = (at: number): string => `${(performance.now() - at).toFixed(0)} ms`;
  t.diagnostic(`${daemon.kind} socket up in ${since(daemonAt)}`);

  const vm = join(dir, 'vm');
  await mkdir(vm);
  const disk = join(vm, 'data.ext4');
  await copyFile(image.dataDisk, disk);
  const name = `smoke-${randomUUID().slice(0, 8)}`;
  const serialLog = join(vm, 'serial0.log');
  const xml = guestDomainXml({ name, image, dataDisk: disk, serialSocket: join(vm, 'serial0'), serialLog });
  await writeFile(join(vm, 'domain.xml'), xml);

  await virsh(daemon.uri, 'define', join(vm, 'domain.xml'));
  const startedAt = performance.now();
  await virsh(daemon.uri, 'start', name);
  const startReturned = performance.now() - startedAt;
  const ready = await waitForConsoleText(serialLog, image.readyMarker, { timeoutMs: 60_000 });
  const readyAfter = performance.now() - startedAt;
  t.diagnostic(`virsh start returned in ${startReturned.toFixed(0)} ms; ready marker after ${readyAfter.toFixed(0)} ms`);
  assert.match(ready.line, /^PODVIRT-GUEST-READY uptime=[\d.]+ agent acpi=poweroff boot_id=[0-9a-f-]{36}$/);
  assert.equal((await virsh(daemon.uri, 'domstate', name)).trim(), 'running');
  const pingAt = performance.now();
  assert.deepEqual(JSON.parse(await agentPing(daemon.uri, name)), { return: {} });
  t.diagnostic(`agent answered guest-ping after ${since(pingAt)}`);

  const qemu = await qemuPidsOf(name);
  assert.equal(qemu.length, 1, 'one qemu for the domain');
  const [qemuPid] = qemu;
  assert.ok((await processesInMountNamespace(daemon.container.mountNamespace)).includes(qemuPid ?? -1),
    'qemu runs in the daemon container');

  const destroyAt = performance.now();
  await virsh(daemon.uri, 'destroy', name);
  t.diagnostic(`virsh destroy took ${since(destroyAt)}`);
  await virsh(daemon.uri, 'undefine', name);
  assert.equal((await virsh(daemon.uri, 'list', '--all', '--name')).trim(), '');
  const closeAt = performance.now();
  await daemon.close();
  t.diagnostic(`daemon close took ${since(closeAt)}`);

  assert.deepEqual(await qemuPidsOf(name), [], 'qemu left running');
  assert.ok(!existsSync(`/proc/${daemon.pid}`), 'daemon process left');
  assert.deepEqual(await processesInMountNamespace(daemon.container.mountNamespace), []);
  const mountinfo = await readFile('/proc/self/mountinfo', 'utf8');
  assert.ok(!mountinfo.includes(dir), 'a mount under the state dir is left');
  assert.ok(!existsSync(daemon.socketPath), 'the daemon socket is left');
});
