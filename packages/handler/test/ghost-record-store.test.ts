// The ghost record store on a real temp dir: atomic files, one per UID, reloaded by a second
// store as a restarted handler would; conflicts refused; torn and unreadable files handled.
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { GhostRecordStore } from '../src/ghost-records/ghost-record-store.js';
import { launcherUnresponsiveMark, markLauncherUnresponsive, UNRESPONSIVE_MARKER } from '../src/ghost-records/unresponsive-marker.js';
import { isHandlerError } from '../src/handler-error.js';
import { quietLog } from './fixtures.js';

async function tempDir(t: TestContext): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'pvh-ghost-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

const RECORD = { name: 'vm1', namespace: 'default', socketFile: '/pods/p1/sockets/launcher-sock', uid: 'uid-1' };

test('records are written one file per UID (0600 in a 0700 dir) and reloaded by a new store', async (t) => {
  const dir = join(await tempDir(t), 'ghost-records');
  const store = new GhostRecordStore(dir, quietLog());
  assert.deepEqual(await store.load(), []);
  assert.equal((await stat(dir)).mode & 0o777, 0o700);
  await store.add(RECORD);
  await store.add({ ...RECORD, uid: 'uid-2', name: 'vm2', socketFile: '/pods/p2/sockets/launcher-sock' });
  assert.deepEqual(await readdir(dir), ['uid-1', 'uid-2']);
  assert.equal((await stat(join(dir, 'uid-1'))).mode & 0o777, 0o600);
  assert.deepEqual(JSON.parse(await readFile(join(dir, 'uid-1'), 'utf8')), RECORD);

  const restarted = new GhostRecordStore(dir, quietLog());
  const loaded = await restarted.load();
  assert.deepEqual(loaded.map((r) => r.uid).sort(), ['uid-1', 'uid-2']);
  assert.deepEqual(restarted.get('uid-1'), RECORD);
  assert.deepEqual(restarted.uidsFor('default/vm2'), ['uid-2']);

  await restarted.remove('uid-1');
  await restarted.remove('uid-1');
  assert.deepEqual(await readdir(dir), ['uid-2']);
  assert.equal(restarted.get('uid-1'), undefined);
});

test('Add is idempotent for the same record and refuses a different socket or name', async (t) => {
  const store = new GhostRecordStore(await tempDir(t), quietLog());
  await store.load();
  await store.add(RECORD);
  await store.add({ ...RECORD });
  for (const changed of [{ ...RECORD, socketFile: '/pods/other/launcher-sock' }, { ...RECORD, name: 'vm9' }]) {
    await assert.rejects(store.add(changed), (err) => isHandlerError(err, 'HANDLER_ERR_GHOST_RECORD_CONFLICT'));
  }
  assert.deepEqual(store.get('uid-1'), RECORD);
  await assert.rejects(store.add({ ...RECORD, uid: '../escape' }), (err) => isHandlerError(err, 'HANDLER_ERR_GHOST_RECORD_INVALID'));
});

test('load drops torn temporary files and skips unreadable records without failing', async (t) => {
  const dir = await tempDir(t);
  await writeFile(join(dir, '.tmp-uid-3'), '{"name":');
  await writeFile(join(dir, 'uid-4'), 'not json');
  await writeFile(join(dir, 'uid-5'), JSON.stringify({ ...RECORD, uid: 'uid-6' }));
  await writeFile(join(dir, 'uid-1'), JSON.stringify(RECORD));
  const store = new GhostRecordStore(dir, quietLog());
  assert.deepEqual(await store.load(), [RECORD]);
  assert.deepEqual((await readdir(dir)).sort(), ['uid-1', 'uid-4', 'uid-5'], 'torn temp file removed, bad records kept for a human');
});

test('a failed write leaves no record behind in memory', async (t) => {
  const dir = await tempDir(t);
  const store = new GhostRecordStore(join(dir, 'records'), quietLog());
  await store.load();
  await rm(join(dir, 'records'), { recursive: true });
  await assert.rejects(store.add(RECORD), (err) => (err as NodeJS.ErrnoException).code === 'ENOENT');
  assert.equal(store.get('uid-1'), undefined);
});

test('the unresponsive marker sits next to the socket and survives as a file', async (t) => {
  const dir = await tempDir(t);
  const socket = join(dir, 'launcher-sock');
  assert.equal(await launcherUnresponsiveMark(socket), undefined);
  await markLauncherUnresponsive(socket);
  await markLauncherUnresponsive(socket);
  assert.equal(await launcherUnresponsiveMark(socket), '');
  await markLauncherUnresponsive(socket, 'connection-refused');
  assert.equal(await launcherUnresponsiveMark(socket), 'connection-refused', 'the marker says why');
  assert.deepEqual(await readdir(dir), [UNRESPONSIVE_MARKER]);
  // A pod directory that is already gone needs no marker and is no error.
  await markLauncherUnresponsive(join(dir, 'gone', 'launcher-sock'));
});
