// The disks that outlive a VM are found only in the pod's mounts and opened confined to them
// (openConfined): a symlink out of the mount, a symlink at all, a mount the pod lacks and a
// claim given in the wrong mode are refused naming the field; a hostDisk is found at its own
// path below its volume's mount (the pod mounts the allowed directory there, at a path that
// mirrors the host's) and every component on the way must be a real directory (a symlinked
// parent is refused, a missing one is never created); a hostDisk DiskOrCreate and a
// filesystem claim's disk.img are created sparse at their size (up to 10 % smaller when the
// volume has less), an image larger than its claim is refused; libvirt gets
// /proc/<pid>/fd/<n>. Real files in a temp dir; nothing outside it is touched.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { VmiInvalidError } from '@podvirt/api';
import { LauncherError } from '../src/errors.js';
import { fittedSize } from '../src/prepare/disk-image.js';
import { PersistentDisks } from '../src/prepare/persistent-disks.js';
import { baseVmi } from './vmi-fixture.js';

const MIB = 1 << 20;

async function pod(t: { after: (fn: () => Promise<void>) => void }) {
  const dir = await mkdtemp(join(tmpdir(), 'podvirt-confine-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const vmiDisksDir = join(dir, 'vmi-disks');
  const devDir = join(dir, 'dev');
  await mkdir(join(vmiDisksDir, 'data'), { recursive: true });
  await mkdir(devDir);
  const outside = join(dir, 'host-secret.img');
  await writeFile(outside, 'do not touch');
  const disks = new PersistentDisks({ vmiDisksDir, devDir, pid: 4242 });
  t.after(() => disks.close());
  return { dir, root: join(vmiDisksDir, 'data'), outside, disks };
}

type VolumeSpec = { name: string } & Record<string, unknown>;
function vmi(volumes: VolumeSpec[], status?: Record<string, unknown>) {
  const v = baseVmi({ volumes }, { devices: { disks: volumes.map(({ name }) => ({ name })) } });
  return status === undefined ? v : { ...v, status };
}
const claimStatus = (size: string, mode = 'Filesystem') => ({
  volumeStatus: [{ name: 'data', target: '', persistentVolumeClaimInfo: { claimName: 'c', volumeMode: mode, capacity: { storage: size }, requests: { storage: size } } }],
});
const claim = (extra: Record<string, unknown> = {}): VolumeSpec[] => [{ name: 'data', persistentVolumeClaim: { claimName: 'c', ...extra } }];
const volumeError = (field: string, pattern: RegExp) => (e: unknown) =>
  e instanceof LauncherError && e.code === 'LAUNCHER_ERR_VOLUME' && e.message.startsWith(`${field}: `) && pattern.test(e.message);

test('symlinks in the mount are refused, whether they lead out or stay inside; the file outside stays untouched', async (t) => {
  const { dir, root, outside, disks } = await pod(t);
  await symlink(outside, join(root, 'disk.img'));
  await assert.rejects(disks.resolve(vmi(claim(), claimStatus('1Mi'))), volumeError('spec.volumes[0].persistentVolumeClaim', /symbolic link/));
  await mkdir(join(root, 'somewhere'));
  await symlink(outside, join(root, 'somewhere', 'disk.img'));
  await assert.rejects(disks.resolve(vmi([{ name: 'data', hostDisk: { path: '/somewhere/disk.img', type: 'DiskOrCreate', capacity: '1Mi' } }])),
    volumeError('spec.volumes[0].hostDisk', /symbolic link/));
  await rm(join(root, 'disk.img'));
  await writeFile(join(root, 'real.img'), Buffer.alloc(4096));
  await symlink('real.img', join(root, 'disk.img'));
  await assert.rejects(disks.resolve(vmi(claim(), claimStatus('1Mi'))), volumeError('spec.volumes[0].persistentVolumeClaim', /symbolic link/));
  assert.equal((await stat(outside)).size, 'do not touch'.length);
  assert.deepEqual((await readdir(dir)).sort(), ['dev', 'host-secret.img', 'vmi-disks']);
});

test('a .. in a hostDisk path never reaches the disk: decodeVmi refuses it; the path is looked up below the volume\'s mount', async (t) => {
  const { root, disks } = await pod(t);
  assert.throws(() => vmi([{ name: 'data', hostDisk: { path: '/var/disks/../../etc/shadow', type: 'Disk' } }]), (e: unknown) => e instanceof VmiInvalidError);
  await mkdir(join(root, 'var/lib/images'), { recursive: true });
  await writeFile(join(root, 'var/lib/images/a.img'), Buffer.alloc(4096));
  const map = await disks.resolve(vmi([{ name: 'data', hostDisk: { path: '/var/lib/images/a.img', type: 'Disk' } }]));
  assert.match(map.get('data')?.path ?? '', /^\/proc\/4242\/fd\/\d+$/);
  assert.equal(map.get('data')?.block, false);
});

test('hostDisk: Disk must exist; DiskOrCreate is made sparse at its capacity, once; a re-sync reuses the open file', async (t) => {
  const { root, disks } = await pod(t);
  await mkdir(join(root, 'h'));
  await assert.rejects(disks.resolve(vmi([{ name: 'data', hostDisk: { path: '/h/missing.img', type: 'Disk' } }])), volumeError('spec.volumes[0].hostDisk', /missing\.img" does not exist/));
  const v = vmi([{ name: 'data', hostDisk: { path: '/h/new.img', type: 'DiskOrCreate', capacity: '8Mi' } }]);
  const first = await disks.resolve(v);
  const st = await stat(join(root, 'h', 'new.img'));
  assert.equal(st.size, 8 * MIB);
  assert.ok(st.blocks * 512 < MIB, 'sparse');
  assert.equal((await disks.resolve(v)).get('data')?.path, first.get('data')?.path);
  assert.equal(typeof first.get('data')?.io.directIo, 'boolean');
  assert.equal(first.get('data')?.io.preallocated, false);
});

test('hostDisk: a symlinked directory under the allowed one is refused, and DiskOrCreate never makes a directory', async (t) => {
  const { dir, root, disks } = await pod(t);
  await mkdir(join(root, 'var/data'), { recursive: true });
  const elsewhere = join(dir, 'elsewhere');
  await mkdir(elsewhere);
  await symlink(elsewhere, join(root, 'var/data/link'));
  for (const type of ['Disk', 'DiskOrCreate']) {
    await assert.rejects(disks.resolve(vmi([{ name: 'data', hostDisk: { path: '/var/data/link/disk.img', type, capacity: '1Mi' } }])),
      volumeError('spec.volumes[0].hostDisk', /goes through a symbolic link/), type);
  }
  assert.deepEqual(await readdir(elsewhere), [], 'nothing made through the link');
  await assert.rejects(disks.resolve(vmi([{ name: 'data', hostDisk: { path: '/var/data/a/b/disk.img', type: 'DiskOrCreate', capacity: '1Mi' } }])),
    volumeError('spec.volumes[0].hostDisk', /a directory on the way to .*\/var\/data\/a\/b\/disk\.img" does not exist \(only the file itself is ever created\)/));
  assert.deepEqual((await readdir(join(root, 'var/data'))).sort(), ['link'], 'no directory chain was made');
});

test('a mount the pod lacks is refused by field', async (t) => {
  const { disks } = await pod(t);
  await assert.rejects(disks.resolve(vmi([{ name: 'other', hostDisk: { path: '/h/x.img', type: 'Disk' } }])), volumeError('spec.volumes[0].hostDisk', /does not exist/));
  await assert.rejects(disks.resolve(vmi([{ name: 'other', persistentVolumeClaim: { claimName: 'c' } }])),
    volumeError('spec.volumes[0].persistentVolumeClaim', /neither a device at .*\/dev\/other nor a mount at .*vmi-disks\/other for claim c/));
});

test('filesystem claim: disk.img created sparse at the claim size and kept; larger than the claim or missing on a read-only claim is refused', async (t) => {
  const { root, disks } = await pod(t);
  await disks.resolve(vmi(claim(), claimStatus('64Mi')));
  const st = await stat(join(root, 'disk.img'));
  assert.equal(st.size, 64 * MIB);
  assert.ok(st.blocks * 512 < MIB, 'sparse');
  await disks.close();
  await writeFile(join(root, 'disk.img'), 'data', { flag: 'r+' });
  await disks.resolve(vmi(claim(), claimStatus('64Mi')));
  assert.equal((await stat(join(root, 'disk.img'))).size, 64 * MIB, 'kept');
  await disks.close();
  await assert.rejects(disks.resolve(vmi(claim(), claimStatus('32Mi'))), volumeError('spec.volumes[0].persistentVolumeClaim', /\(64Mi\) is larger than its volume allows \(32Mi\)/));
  await rm(join(root, 'disk.img'));
  await assert.rejects(disks.resolve(vmi(claim({ readOnly: true }), claimStatus('32Mi'))), volumeError('spec.volumes[0].persistentVolumeClaim', /does not exist/));
  await assert.rejects(disks.resolve(vmi(claim(), claimStatus('512Ki'))), (e: unknown) => e instanceof VmiInvalidError && /smaller than 1Mi/.test(e.message));
});

test('a claim in the other mode than the pod gives it is refused by name', async (t) => {
  const { disks } = await pod(t);
  await assert.rejects(disks.resolve(vmi(claim(), claimStatus('1Mi', 'Block'))),
    volumeError('spec.volumes[0].persistentVolumeClaim', /claim c has volumeMode Block, but the pod mounts it as a filesystem/));
});

test('a hotplugged claim is opened where podvirt-handler brought it: a block claim\'s node at <dir>/<volume>, a filesystem claim\'s image at <dir>/<volume>.img', { skip: process.getuid?.() !== 0 ? 'needs root (mknod)' : false }, async (t) => {
  const { dir, disks } = await pod(t);
  const hotplugDir = join(dir, 'hotplug-disks');
  await mkdir(hotplugDir);
  // A node with a real block device's numbers (an unbound loop device opens; nothing is written).
  const loop = await stat('/dev/loop0', { bigint: true });
  execFileSync('mknod', ['-m', '660', join(hotplugDir, 'data'), 'b', String(loop.rdev >> 8n), String(loop.rdev & 0xffn)]);
  await writeFile(join(hotplugDir, 'data.img'), '');
  const hotplugged = (mode: string) => vmi(claim({ hotpluggable: true }), claimStatus('1Mi', mode));
  const block = await disks.openHotplug(hotplugged('Block'), 'data', hotplugDir);
  assert.equal(block.block, true);
  assert.match(block.path, /^\/proc\/4242\/fd\/\d+$/);
  await disks.releaseHotplug('data', hotplugDir);
  const file = await disks.openHotplug(hotplugged('Filesystem'), 'data', hotplugDir);
  assert.equal(file.block, false);
  // A Block claim whose node is a regular file is refused, naming the volume.
  await disks.releaseHotplug('data', hotplugDir);
  await rm(join(hotplugDir, 'data'));
  await writeFile(join(hotplugDir, 'data'), '');
  await assert.rejects(disks.openHotplug(hotplugged('Block'), 'data', hotplugDir), (e: unknown) => e instanceof LauncherError && e.code === 'LAUNCHER_ERR_HOTPLUG' && /^volume data: /.test(e.message));
});

test('free space: up to 10 % short is tolerated (the image shrinks), more is an error naming the field', () => {
  assert.equal(fittedSize(100n, 200n, 'f'), 100n);
  assert.equal(fittedSize(100n, 90n, 'f'), 90n);
  assert.throws(() => fittedSize(100n << 20n, 89n << 20n, 'spec.volumes[0].hostDisk'),
    (e: unknown) => e instanceof LauncherError && /^spec\.volumes\[0\]\.hostDisk: not enough space for a 100Mi disk image: 89Mi free/.test(e.message));
});
