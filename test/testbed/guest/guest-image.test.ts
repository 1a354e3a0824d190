import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { guestImage } from './guest-image.js';
import { repoRoot } from './repo-root.js';

const run = promisify(execFile);

void test('the built image: kernel, gzip initrd, ext4 disk, markers', async () => {
  const image = guestImage();
  for (const f of [image.kernel, image.initrd, image.dataDisk]) assert.ok(existsSync(f), f);
  const initrd = await readFile(image.initrd);
  assert.deepEqual([...initrd.subarray(0, 2)], [0x1f, 0x8b], 'initrd is gzip');
  const disk = await readFile(image.dataDisk);
  assert.equal(disk.readUInt16LE(1024 + 0x38), 0xef53, 'data disk carries the ext4 magic');
  assert.match(image.kernelArgs, /(^| )console=ttyS0( |$)/);
  assert.equal(image.readyMarker, 'PODVIRT-GUEST-READY');
});

void test('a missing image names the build command', async (t) => {
  const root = await mkdtemp(join(tmpdir(), 'podvirt-noimage-'));
  t.after(() => rm(root, { recursive: true, force: true }));
  assert.throws(() => guestImage(root), (err: Error & { code?: string }) => {
    assert.equal(err.code, 'PODVIRT_TESTBED_NO_GUEST_IMAGE');
    assert.match(err.message, /run test\/testbed\/guest\/build/);
    return true;
  });
});

void test('the builder is cached by content: an unchanged rebuild prints the same directory', async () => {
  const before = guestImage().dir;
  const { stdout } = await run(join(repoRoot(), 'test', 'testbed', 'guest', 'build'), [], { timeout: 120_000 });
  assert.equal(stdout.trim(), before);
  assert.equal(guestImage().dir, before);
});
