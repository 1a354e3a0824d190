// hostDisk with the real launcher, libvirt and qemu, laid out as the launcher pod mounts it (the
// allowed directory holding the path at <private>/vmi-disks/<volume><that directory>, so the
// file is at <private>/vmi-disks/<volume><path>): the guest's data disk as a host disk boots
// and mounts (qemu opened the checked file through the launcher's descriptor); a DiskOrCreate
// disk is made sparse at its capacity in the mount; a symlink in the mount, to a file outside or
// inside, and a missing Disk are refused by Sync as LAUNCHER_ERR_VOLUME naming the field, and
// nothing is created outside.
import assert from 'node:assert/strict';
import { copyFile, mkdir, mkdtemp, readdir, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { status, type ServiceError } from '@grpc/grpc-js';
import { eventually } from '@podvirt/test-support';
import { guestImage } from '../testbed/index.js';
import { startLauncher, waitForReady, type LauncherRun } from './launcher-run.js';

function withHostDisk(hostDisk: Record<string, unknown>) {
  return (vmi: Record<string, unknown>): Record<string, unknown> => {
    const spec = vmi['spec'] as Record<string, unknown>;
    return { ...vmi, spec: { ...spec, volumes: [{ name: 'data', hostDisk }] } };
  };
}

/** Resolves once the guest agent reports the data disk mounted at /mnt as ext4; fails after 60 s. */
async function mounted(run: LauncherRun): Promise<void> {
  await eventually(async () => {
    const fs = await run.cmd.getFilesystems({}).catch(() => ({ filesystems: [] }));
    return fs.filesystems.some((f) => f.mountPoint === '/mnt' && f.fileSystemType === 'ext4');
  }, { what: 'the guest mounted its data disk from the host disk', deadlineMs: 60_000, stepMs: 300 });
}

test('a host disk in the pod mount boots through the confined descriptor', { timeout: 180_000 }, async (t) => {
  const run = await startLauncher(t, {
    editVmi: withHostDisk({ path: '/var/lib/images/data.img', type: 'Disk' }),
    setUpPrivateDir: async (p) => {
      await mkdir(join(p, 'vmi-disks', 'data', 'var/lib/images'), { recursive: true });
      await copyFile(guestImage().dataDisk, join(p, 'vmi-disks', 'data', 'var/lib/images/data.img'));
    },
  });
  await waitForReady(run);
  await mounted(run);
});

test('Sync makes a DiskOrCreate disk in the mount; refuses symlinks and a missing Disk by field', { timeout: 180_000 }, async (t) => {
  const outside = await mkdtemp(join(tmpdir(), 'podvirt-hostdisk-outside-'));
  t.after(() => rm(outside, { recursive: true, force: true }));
  await writeFile(join(outside, 'secret.img'), 'outside');
  let mount = '';
  const run = await startLauncher(t, {
    standalone: false,
    setUpPrivateDir: async (p) => {
      mount = join(p, 'vmi-disks', 'data', 'h');
      await mkdir(mount, { recursive: true });
      await symlink(join(outside, 'secret.img'), join(mount, 'out.img'));
      await writeFile(join(mount, 'real.img'), Buffer.alloc(4096));
      await symlink('real.img', join(mount, 'in.img'));
    },
  });
  const cases = [
    { path: '/h/out.img', type: 'Disk', want: /symbolic link/ },
    { path: '/h/in.img', type: 'DiskOrCreate', capacity: '1Mi', want: /symbolic link/ },
    { path: '/h/none.img', type: 'Disk', want: /does not exist/ },
  ];
  for (const { want, ...hostDisk } of cases) {
    const vmi = withHostDisk(hostDisk)(run.vmi);
    const err = await run.cmd.sync({ vmiJson: Buffer.from(JSON.stringify(vmi)) }).then(() => undefined, (e: ServiceError) => e);
    assert.equal(err?.code, status.FAILED_PRECONDITION, `${hostDisk.path}: ${err?.details}`);
    assert.equal(err.metadata.get('podvirt-error-code')[0], 'LAUNCHER_ERR_VOLUME');
    assert.match(err.details, /^spec\.volumes\[0\]\.hostDisk: /);
    assert.match(err.details, want);
  }
  assert.deepEqual(await readdir(outside), ['secret.img'], 'nothing was created outside the mount');
  // A disk to create: made sparse at its capacity in the mount (the domain then starts on it).
  const vmi = withHostDisk({ path: '/h/new.img', type: 'DiskOrCreate', capacity: '16Mi' })(run.vmi);
  await run.cmd.sync({ vmiJson: Buffer.from(JSON.stringify(vmi)) }, { timeoutMs: 90_000 });
  assert.equal((await stat(join(mount, 'new.img'))).size, 16 * 1024 * 1024);
});
