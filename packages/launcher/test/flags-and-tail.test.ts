// Flag parsing (KubeVirt's launcher flags, ignored ones, errors) and the log file tail.
import assert from 'node:assert/strict';
import { appendFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { GoFlagError } from '@podvirt/api/go-flags';
import { parseFlags } from '../src/flags.js';
import { FileTail } from '../src/logs/file-tail.js';

test('KubeVirt launcher flags parse; unsupported ones are collected, unknown ones refused', () => {
  const f = parseFlags(['--qemu-timeout', '245s', '--name', 'vm', '--uid=u-1', '--namespace', 'ns', '--kubevirt-share-dir', '/s',
    '--ephemeral-disk-dir', '/e', '--container-disk-dir', '/c', '--grace-period-seconds', '45', '--hook-sidecars', '0',
    '--keep-after-failure', '--allow-emulation', '--dev-dir', '/d'], {});
  assert.equal(f.qemuTimeoutMs, 245_000);
  assert.deepEqual([f.name, f.uid, f.namespace, f.shareDir, f.ephemeralDiskDir, f.containerDiskDir], ['vm', 'u-1', 'ns', '/s', '/e', '/c']);
  assert.equal(f.gracePeriodSeconds, 45);
  assert.equal(f.allowEmulation, true);
  assert.equal(f.devDir, '/d');
  assert.deepEqual(f.ignored, ['hook-sidecars', 'keep-after-failure']);
  const d = parseFlags([], {});
  assert.deepEqual([d.shareDir, d.containerDiskDir, d.qemuTimeoutMs, d.gracePeriodSeconds, d.allowEmulation], ['/var/run/kubevirt', '/var/run/kubevirt/container-disks', 180_000, 30, false]);
  assert.equal(parseFlags([], { PODVIRT_ALLOW_EMULATION: 'true' }).allowEmulation, true);
  assert.equal(parseFlags(['--allow-emulation=false'], { PODVIRT_ALLOW_EMULATION: 'true' }).allowEmulation, false);
  assert.equal(parseFlags(['-qemu-timeout=1h30m', '-simulate-crash'], {}).qemuTimeoutMs, 5_400_000);
  assert.equal(parseFlags(['-simulate-crash'], {}).simulateCrash, true);
  // The libvirt daemon: virtqemud unless PODVIRT_LIBVIRT_DAEMON asks for the libvirtd fallback.
  assert.deepEqual([d.daemon, d.virtqemud], ['virtqemud', undefined]);
  const fallback = parseFlags([], { PODVIRT_LIBVIRT_DAEMON: 'libvirtd', PODVIRT_VIRTQEMUD: '/v' });
  assert.deepEqual([fallback.daemon, fallback.virtqemud], ['libvirtd', '/v']);
  assert.throws(() => parseFlags([], { PODVIRT_LIBVIRT_DAEMON: 'qemu' }), /PODVIRT_LIBVIRT_DAEMON="qemu"/);
  const refusedNaming = (argv: string[], flag: string | undefined, env: Record<string, string> = {}): void => {
    assert.throws(() => parseFlags(argv, env), (err: unknown) => err instanceof GoFlagError && err.flag === flag);
  };
  refusedNaming(['--frobnicate'], 'frobnicate');
  refusedNaming(['--name'], 'name');
  refusedNaming(['--grace-period-seconds', '-1'], 'grace-period-seconds');
  refusedNaming(['--grace-period-seconds=1.5'], 'grace-period-seconds');
  refusedNaming(['--qemu-timeout', 'soon'], 'qemu-timeout');
  refusedNaming(['vm'], undefined);
  refusedNaming([], 'allow-emulation', { PODVIRT_ALLOW_EMULATION: 'maybe' });
});

test('the tail emits whole lines, waits for the file, follows truncation, flushes on close', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'podvirt-tail-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const path = join(dir, 'q.log');
  const lines: string[] = [];
  const tail = new FileTail({ path, onLine: (l) => lines.push(l), intervalMs: 10_000 });
  t.after(() => tail.close());
  await tail.poll();
  await writeFile(path, 'one\ntw');
  await tail.poll();
  assert.deepEqual(lines, ['one']);
  await appendFile(path, 'o\n');
  await tail.poll();
  await writeFile(path, 'new\n');
  await tail.poll();
  await appendFile(path, 'last');
  await tail.close();
  assert.deepEqual(lines, ['one', 'two', 'new', 'last']);
});
