// The prepare step with the real tools in a temp dir: qcow2 overlay on a raw image, sparse
// empty disk, cloud-init ISO (plain, base64 and secret-file data); and the
// container-disk layout that feeds the converter.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { LauncherError } from '../src/errors.js';
import { fileExists, inspectImages } from '../src/prepare/container-disk-layout.js';
import { prepareFiles } from '../src/prepare/prepare-files.js';
import { baseVmi, invalidAt } from './vmi-fixture.js';

async function tempDir(t: { after: (fn: () => Promise<void>) => void }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'podvirt-prepare-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

test('overlay, empty disk and cloud-init ISO are created once', async (t) => {
  const dir = await tempDir(t);
  const image = join(dir, 'image.raw');
  await writeFile(image, Buffer.alloc(1024 * 1024));
  await mkdir(join(dir, 'secrets', 'ci'), { recursive: true });
  await writeFile(join(dir, 'secrets', 'ci', 'networkdata'), 'version: 2\n');
  const steps = [
    { kind: 'overlay', path: join(dir, 'eph', 'disk-data', 'c', 'disk.qcow2'), backingFile: image, backingFormat: 'raw' },
    { kind: 'emptyDisk', path: join(dir, 'empty', 'e.img'), sizeBytes: 64n * 1024n * 1024n },
    { kind: 'cloudInitNoCloud', path: join(dir, 'ci', 'noCloud.iso'), volume: 'ci', userData: { base64: Buffer.from('#cloud-config\nhello: 1\n').toString('base64') },
      networkData: { secret: 'net', keys: ['networkdata', 'networkData'] }, instanceId: 'vm.ns', hostname: 'vm' },
  ] as const;
  await prepareFiles(steps, { secretsDir: join(dir, 'secrets') });
  const info = JSON.parse(execFileSync('qemu-img', ['info', '--output=json', steps[0].path], { encoding: 'utf8' })) as Record<string, unknown>;
  assert.equal(info['format'], 'qcow2');
  assert.equal(info['backing-filename'], image);
  assert.equal(info['backing-filename-format'], 'raw');
  const empty = await stat(steps[1].path);
  assert.equal(empty.size, 64 * 1024 * 1024);
  assert.ok(empty.blocks * 512 < 1024 * 1024, 'sparse');
  assert.match(execFileSync('isoinfo', ['-d', '-i', steps[2].path], { encoding: 'utf8' }), /Volume id: cidata/);
  assert.equal(execFileSync('isoinfo', ['-J', '-i', steps[2].path, '-x', '/user-data'], { encoding: 'utf8' }), '#cloud-config\nhello: 1\n');
  assert.equal(execFileSync('isoinfo', ['-J', '-i', steps[2].path, '-x', '/network-config'], { encoding: 'utf8' }), 'version: 2\n');
  assert.match(execFileSync('isoinfo', ['-J', '-i', steps[2].path, '-x', '/meta-data'], { encoding: 'utf8' }), /instance-id: vm.ns/);
  assert.equal((await stat(steps[2].path)).mode & 0o777, 0o600, 'cloud-init data is owner-only');
  assert.equal((await stat(steps[1].path)).mode & 0o777, 0o600, 'an empty disk is owner-only');
  const before = (await stat(steps[0].path)).mtimeMs;
  await prepareFiles(steps, { secretsDir: join(dir, 'secrets') });
  assert.equal((await stat(steps[0].path)).mtimeMs, before, 'a second prepare keeps existing files');
});

test('a missing secret is a prepare error', async (t) => {
  const dir = await tempDir(t);
  await assert.rejects(prepareFiles([{ kind: 'cloudInitNoCloud', path: join(dir, 'x.iso'), volume: 'v', userData: { secret: 's', keys: ['userdata'] }, instanceId: 'i', hostname: 'h' }], { secretsDir: dir }),
    (e) => e instanceof LauncherError && e.code === 'LAUNCHER_ERR_VOLUME' && /secret s has no key userdata/.test(e.message));
});

test('container-disk layout: per-volume dir, KubeVirt disk_<i>.img, kernel-boot files', async (t) => {
  const dir = await tempDir(t);
  await mkdir(join(dir, 'a'));
  await writeFile(join(dir, 'a', 'disk.img'), 'x');
  await writeFile(join(dir, 'disk_1.img'), 'x');
  await mkdir(join(dir, 'kernel-boot', 'boot'), { recursive: true });
  await writeFile(join(dir, 'kernel-boot', 'boot', 'vmlinuz'), 'k');
  const vmi = baseVmi({ volumes: [{ name: 'a', containerDisk: { image: 'i' } }, { name: 'b', containerDisk: { image: 'i' } }] }, {
    devices: { disks: [{ name: 'a' }, { name: 'b' }] },
    firmware: { kernelBoot: { container: { image: 'k', kernelPath: '/boot/vmlinuz' } } },
  });
  const found = await inspectImages(vmi, dir, { exists: fileExists, format: () => Promise.resolve('raw') });
  const missing = baseVmi({}, { firmware: { kernelBoot: { container: { image: 'k', kernelPath: '/boot/vmlinuz', initrdPath: '/boot/missing' } } } });
  await assert.rejects(inspectImages(missing, dir, { exists: fileExists, format: () => Promise.resolve('raw') }),
    invalidAt('spec.domain.firmware.kernelBoot.container.initrdPath'));
  assert.deepEqual([...found.containerDisks], [['a', { path: join(dir, 'a', 'disk.img'), format: 'raw' }], ['b', { path: join(dir, 'disk_1.img'), format: 'raw' }]]);
  assert.deepEqual(found.kernelBoot, { kernel: join(dir, 'kernel-boot', 'boot', 'vmlinuz') });
  await assert.rejects(inspectImages(vmi, dir, { exists: fileExists, format: () => Promise.resolve('vmdk') }),
    invalidAt('spec.volumes[0].containerDisk.image'));
});

test('a disk the filesystem cannot hold fails the step, names the field, and leaves no file a retry would take as done', async (t) => {
  const dir = await tempDir(t);
  const path = join(dir, 'empty', 'huge.img');
  // 2^62 bytes: beyond any filesystem's file size limit (EFBIG), and beyond a safe Number too.
  const steps = [{ kind: 'emptyDisk', path, sizeBytes: 2n ** 62n, field: 'spec.volumes[1].emptyDisk.capacity' }] as const;
  const refused = (e: unknown): boolean =>
    e instanceof LauncherError && e.code === 'LAUNCHER_ERR_VOLUME' && /spec\.volumes\[1\]\.emptyDisk\.capacity/.test(e.message);
  await assert.rejects(prepareFiles(steps, { secretsDir: dir }), refused);
  assert.deepEqual(await readdir(join(dir, 'empty')), [], 'nothing left behind, not even a temporary file');
  await assert.rejects(prepareFiles(steps, { secretsDir: dir }), refused, 'the retry fails the same way instead of skipping the disk');
  // 1 PiB fits a Number but not ext4/tmpfs: the filesystem's own EFBIG.
  const big = [{ kind: 'emptyDisk', path, sizeBytes: 2n ** 50n * 64n, field: 'spec.volumes[1].emptyDisk.capacity' }] as const;
  await assert.rejects(prepareFiles(big, { secretsDir: dir }), refused);
  assert.deepEqual(await readdir(join(dir, 'empty')), []);
});

test('a tool that fails leaves no half-made file behind', async (t) => {
  const dir = await tempDir(t);
  const path = join(dir, 'eph', 'disk.qcow2');
  const steps = [{ kind: 'overlay', path, backingFile: join(dir, 'missing.raw'), backingFormat: 'raw' }] as const;
  await assert.rejects(prepareFiles(steps, { secretsDir: dir }), (e) => e instanceof LauncherError && e.code === 'LAUNCHER_ERR_PREPARE');
  assert.deepEqual(await readdir(join(dir, 'eph')), []);
});
