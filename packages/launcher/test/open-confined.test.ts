// "Open a path confined to a root" against a real directory tree: symlinks to files and
// directories outside, a symlinked parent for DiskOrCreate, the root itself, FIFOs, sockets,
// and a swap of a checked directory for a symlink after the walk started.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile, readdir, rename } from 'node:fs/promises';
import { createServer } from 'node:net';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ConfinementError, openConfined, type ConfinementReason } from '../src/host/open-confined.js';

async function tree(t: { after: (fn: () => Promise<void>) => void }) {
  const base = await mkdtemp(join(tmpdir(), 'podvirt-confined-'));
  t.after(() => rm(base, { recursive: true, force: true }));
  const root = join(base, 'disks');
  const outside = join(base, 'outside');
  await mkdir(join(root, 'sub'), { recursive: true });
  await mkdir(outside);
  await writeFile(join(root, 'ok.img'), 'inside');
  await writeFile(join(root, 'sub', 'deep.img'), 'deep');
  await writeFile(join(outside, 'secret'), 'shadow');
  return { base, root, outside };
}

async function refused(p: Promise<unknown>, reason: ConfinementReason): Promise<void> {
  await assert.rejects(p, (e: unknown) => e instanceof ConfinementError && e.reason === reason);
}

test('a regular file inside the root opens; its real path is reported', async (t) => {
  const { root } = await tree(t);
  const f = await openConfined(root, join(root, 'sub', 'deep.img'));
  t.after(() => f.close());
  assert.equal(f.kind, 'file');
  assert.equal(f.realPath, join(root, 'sub', 'deep.img'));
  assert.equal(f.procPath(77), `/proc/77/fd/${f.fd}`);
  assert.equal(await readFile(`/proc/self/fd/${f.fd}`, 'utf8'), 'deep');
});

test('symlinks to a file or a directory outside are refused, as are symlinks inside', async (t) => {
  const { root, outside } = await tree(t);
  await symlink('/etc/shadow', join(root, 'shadow.img'));
  await symlink(outside, join(root, 'escape'));
  await symlink(join(root, 'ok.img'), join(root, 'alias.img'));
  await refused(openConfined(root, join(root, 'shadow.img')), 'SYMLINK');
  await refused(openConfined(root, join(root, 'escape', 'secret')), 'SYMLINK');
  await refused(openConfined(root, join(root, 'escape', 'passwd')), 'SYMLINK');
  await refused(openConfined(root, join(root, 'alias.img')), 'SYMLINK');
});

test('DiskOrCreate through a symlinked parent creates nothing outside', async (t) => {
  const { root, outside } = await tree(t);
  await symlink(outside, join(root, 'parent'));
  await refused(openConfined(root, join(root, 'parent', 'new.img'), { create: { sizeBytes: 4096n } }), 'SYMLINK');
  assert.deepEqual(await readdir(outside), ['secret']);
  await symlink(join(outside, 'planted.img'), join(root, 'dangling.img'));
  await refused(openConfined(root, join(root, 'dangling.img'), { create: { sizeBytes: 4096n } }), 'SYMLINK');
  assert.deepEqual(await readdir(outside), ['secret']);
});

test('DiskOrCreate makes a sparse owner-only file, never a missing directory', async (t) => {
  const { root } = await tree(t);
  await refused(openConfined(root, join(root, 'a', 'b', 'new.img'), { create: { sizeBytes: 4096n } }), 'DIR_NOT_FOUND');
  await assert.rejects(stat(join(root, 'a')), { code: 'ENOENT' });
  const path = join(root, 'new.img');
  const f = await openConfined(root, path, { create: { sizeBytes: 1024n * 1024n } });
  t.after(() => f.close());
  const st = await stat(path);
  assert.equal(st.size, 1024 * 1024);
  assert.equal(st.mode & 0o777, 0o600);
  const again = await openConfined(root, path, { create: { sizeBytes: 1n } });
  await again.close();
  assert.equal((await stat(path)).size, 1024 * 1024, 'an existing disk is never truncated');
});

test('the root itself, a directory, text outside the root and missing files are refused by name', async (t) => {
  const { root, outside } = await tree(t);
  await refused(openConfined(root, root), 'IS_ROOT');
  await refused(openConfined(root, `${root}/`), 'IS_ROOT');
  await refused(openConfined(root, join(root, 'sub')), 'WRONG_TYPE');
  await refused(openConfined(root, join(root, '..', 'outside', 'secret')), 'OUTSIDE_ROOT');
  await refused(openConfined(root, `${root}-evil/x`), 'OUTSIDE_ROOT');
  await refused(openConfined(root, 'relative.img'), 'NOT_ABSOLUTE');
  await refused(openConfined(root, join(root, 'none.img')), 'NOT_FOUND');
  await refused(openConfined(root, join(root, 'ok.img', 'x')), 'NOT_A_DIRECTORY');
  await refused(openConfined(join(outside, 'nope'), join(outside, 'nope', 'x')), 'NOT_FOUND');
});

test('FIFOs, sockets and character devices are refused without hanging', async (t) => {
  const { root } = await tree(t);
  execFileSync('mkfifo', [join(root, 'fifo.img')]);
  await refused(openConfined(root, join(root, 'fifo.img')), 'WRONG_TYPE');
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(join(root, 'sock.img'), resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  await refused(openConfined(root, join(root, 'sock.img')), 'WRONG_TYPE');
  await refused(openConfined('/dev', '/dev/null'), 'WRONG_TYPE');
  await refused(openConfined('/dev', '/dev/null', { accept: 'block' }), 'WRONG_TYPE');
});

test('a directory swapped for a symlink after it was checked is not followed', async (t) => {
  const { root, outside } = await tree(t);
  // Text-based checks accept this path; by the time it is opened, "sub" points outside.
  await rename(join(root, 'sub'), join(root, 'sub-old'));
  await symlink(outside, join(root, 'sub'));
  await writeFile(join(outside, 'deep.img'), 'outside');
  await refused(openConfined(root, join(root, 'sub', 'deep.img')), 'SYMLINK');
});

test('a trusted root that is itself a symlink is resolved once', async (t) => {
  const { base, root } = await tree(t);
  await symlink(root, join(base, 'link-root'));
  const f = await openConfined(join(base, 'link-root'), join(base, 'link-root', 'ok.img'));
  assert.equal(f.realPath, join(root, 'ok.img'));
  await f.close();
});
