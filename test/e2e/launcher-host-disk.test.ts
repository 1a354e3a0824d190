// hostDisk confinement with the real launcher, libvirt and qemu: the guest's data disk as a
// host disk boots and mounts (qemu opened the checked file through the launcher's descriptor);
// a symlink to a file outside, a symlinked parent for DiskOrCreate and the directory itself are
// refused by Sync with INVALID_ARGUMENT naming the field, and nothing is created outside.
import assert from 'node:assert/strict';
import { copyFile, mkdir, mkdtemp, readdir, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { status, type ServiceError } from '@grpc/grpc-js';
import { guestImage } from '../testbed/index.js';
import { startLauncher, waitForReady } from './launcher-run.js';

function withHostDisk(hostDisk: Record<string, unknown>) {
  return (vmi: Record<string, unknown>): Record<string, unknown> => {
    const spec = vmi['spec'] as Record<string, unknown>;
    return { ...vmi, spec: { ...spec, volumes: [{ name: 'data', hostDisk }] } };
  };
}

async function hostDirs(t: { after: (fn: () => Promise<void>) => void }) {
  const base = await mkdtemp(join(tmpdir(), 'podvirt-hostdisk-'));
  t.after(() => rm(base, { recursive: true, force: true }));
  const disks = join(base, 'disks');
  const outside = join(base, 'outside');
  await mkdir(disks);
  await mkdir(outside);
  return { disks, outside };
}

test('a host disk boots through the confined descriptor; escapes are refused by field', { timeout: 180_000 }, async (t) => {
  const { disks } = await hostDirs(t);
  await copyFile(guestImage().dataDisk, join(disks, 'data.img'));
  const run = await startLauncher(t, { hostDiskDir: disks, editVmi: withHostDisk({ path: join(disks, 'data.img'), type: 'Disk' }) });
  await waitForReady(run);
  const deadline = Date.now() + 60_000;
  let mounted = false;
  while (!mounted && Date.now() < deadline) {
    const fs = await run.cmd.getFilesystems({}).catch(() => ({ filesystems: [] }));
    mounted = fs.filesystems.some((f) => f.mountPoint === '/mnt' && f.fileSystemType === 'ext4');
    if (!mounted) await new Promise((r) => setTimeout(r, 300));
  }
  assert.ok(mounted, 'the guest mounted its data disk from the host disk');
});

test('Sync refuses a symlink out, a symlinked parent and the directory itself', { timeout: 180_000 }, async (t) => {
  const { disks, outside } = await hostDirs(t);
  await symlink('/etc/shadow', join(disks, 'shadow.img'));
  await symlink(outside, join(disks, 'parent'));
  const run = await startLauncher(t, { hostDiskDir: disks, standalone: false });
  const cases = [
    { path: join(disks, 'shadow.img'), type: 'Disk' },
    { path: join(disks, 'parent', 'new.img'), type: 'DiskOrCreate', capacity: '1Mi' },
    { path: disks, type: 'Disk' },
  ];
  for (const hostDisk of cases) {
    const vmi = withHostDisk(hostDisk)(run.vmi);
    const err = await run.cmd.sync({ vmiJson: Buffer.from(JSON.stringify(vmi)) }).then(() => undefined, (e: ServiceError) => e);
    assert.equal(err?.code, status.INVALID_ARGUMENT, `${hostDisk.path}: ${err?.details}`);
    assert.match(err.details, /^invalid VirtualMachineInstance: spec\.volumes\[0\]\.hostDisk\.path: /);
  }
  assert.deepEqual(await readdir(outside), [], 'nothing was created outside the host-disk directory');
});
