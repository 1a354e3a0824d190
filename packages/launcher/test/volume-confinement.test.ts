// A disk the launcher hands to qemu lies inside its pod's mount: `..` and symlinks that lead
// out are refused, a PVC image is created sparse at the claim's size (or up to 10 % smaller
// when the filesystem has less), an image larger than its claim is refused, and a block claim
// must be a block device. Real files in a temp dir; nothing outside it is touched.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { LauncherError } from '../src/errors.js';
import { confinedDiskPath } from '../src/prepare/confined-path.js';
import { ensureDiskImage, fittedSize, checkBlockDevice } from '../src/prepare/disk-image.js';
import { inspectVolumes } from '../src/prepare/inspect-volumes.js';
import { baseVmi } from './vmi-fixture.js';

async function layout(t: { after: (fn: () => Promise<void>) => void }) {
  const dir = await mkdtemp(join(tmpdir(), 'podvirt-confine-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const root = join(dir, 'vmi-disks', 'data');
  await mkdir(root, { recursive: true });
  const outside = join(dir, 'host-secret.img');
  await writeFile(outside, 'do not touch');
  return { dir, root, outside };
}

const volumeError = (pattern: RegExp) => (e: unknown) => e instanceof LauncherError && e.code === 'LAUNCHER_ERR_VOLUME' && pattern.test(e.message);

test('paths with .. or symlinks that leave the mount are refused; the file outside stays untouched', async (t) => {
  const { root, outside } = await layout(t);
  await assert.rejects(confinedDiskPath(root, join(root, '..', '..', 'host-secret.img'), 'file', 'claim c'), volumeError(/outside the pod's mount/));
  await symlink(outside, join(root, 'disk.img'));
  await assert.rejects(ensureDiskImage({ root, path: join(root, 'disk.img'), what: 'claim c', sizeBytes: 1n << 20n }), volumeError(/resolves to .*host-secret.img, outside/));
  await mkdir(join(root, 'sub'));
  await symlink(join(root, '..', '..'), join(root, 'sub', 'up'));
  await assert.rejects(ensureDiskImage({ root, path: join(root, 'sub', 'up', 'new.img'), what: 'claim c', sizeBytes: 1n << 20n }), volumeError(/outside the pod's mount/));
  assert.equal((await stat(outside)).size, 'do not touch'.length);
  assert.deepEqual((await readdir(join(root, '..', '..'))).sort(), ['host-secret.img', 'vmi-disks']);
});

test('a symlink inside the mount is followed; a directory or a missing mount is refused', async (t) => {
  const { dir, root } = await layout(t);
  await writeFile(join(root, 'real.img'), Buffer.alloc(4096));
  await symlink('real.img', join(root, 'disk.img'));
  assert.equal(await confinedDiskPath(root, join(root, 'disk.img'), 'file', 'claim c'), join(await import('node:fs/promises').then((f) => f.realpath(root)), 'real.img'));
  await mkdir(join(root, 'dir.img'));
  await assert.rejects(confinedDiskPath(root, join(root, 'dir.img'), 'file', 'claim c'), volumeError(/not a regular file/));
  await assert.rejects(confinedDiskPath(join(dir, 'nope'), join(dir, 'nope', 'disk.img'), 'file', 'claim c'), volumeError(/is not mounted in this pod/));
});

test('disk.img: created sparse at the size, kept on the next start, refused when larger than the claim', async (t) => {
  const { root } = await layout(t);
  const path = join(root, 'disk.img');
  await ensureDiskImage({ root, path, what: 'claim c', sizeBytes: 64n << 20n, maxBytes: 64n << 20n });
  const st = await stat(path);
  assert.equal(st.size, 64 << 20);
  assert.ok(st.blocks * 512 < 1 << 20, 'sparse');
  await writeFile(path, 'data', { flag: 'r+' });
  await ensureDiskImage({ root, path, what: 'claim c', sizeBytes: 64n << 20n, maxBytes: 64n << 20n });
  assert.equal((await stat(path)).size, 64 << 20, 'kept');
  await assert.rejects(ensureDiskImage({ root, path, what: 'claim c', maxBytes: 32n << 20n }), volumeError(/disk image .* \(64Mi\) is larger than the claim \(32Mi\)/));
  await assert.rejects(ensureDiskImage({ root, path: join(root, 'other.img'), what: 'claim c' }), volumeError(/does not exist/));
});

test('free space: up to 10 % short is tolerated (the image shrinks), more is an error naming the claim', () => {
  assert.equal(fittedSize(100n, 200n, 'claim c'), 100n);
  assert.equal(fittedSize(100n, 90n, 'claim c'), 90n);
  assert.throws(() => fittedSize(100n << 20n, 89n << 20n, 'claim c'), volumeError(/claim c: not enough space for a 100Mi disk image: 89Mi free/));
});

test('a block claim must be a block device; inspection tells block from filesystem and probes O_DIRECT', async (t) => {
  const { dir, root } = await layout(t);
  const dev = join(dir, 'dev');
  await mkdir(dev);
  await writeFile(join(dev, 'blk'), 'not a device');
  await assert.rejects(checkBlockDevice(dev, join(dev, 'blk'), 'claim b'), volumeError(/not a block device/));
  await assert.rejects(checkBlockDevice(dev, join(dev, 'gone'), 'claim b'), volumeError(/no block device at/));
  const vmi = baseVmi({ volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'c' } }, { name: 'blk', persistentVolumeClaim: { claimName: 'b' } }] });
  const found = await inspectVolumes(vmi, join(dir, 'vmi-disks'), dev);
  assert.equal(found.volumeModes.get('data'), 'filesystem');
  assert.equal(found.volumeModes.has('blk'), false, 'a regular file at /dev/<vol> is no block claim');
  assert.equal(typeof found.diskIo.get('data')?.directIo, 'boolean');
  assert.deepEqual(await readdir(root), [], 'the O_DIRECT probe leaves nothing behind');
});
