// podvirt-tail (the guest-console-log container): flags as virt-tail takes them, the whole log
// from its start, rotation by rename and by truncation, and the last partial line on stop.
import assert from 'node:assert/strict';
import { appendFile, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { GoFlagError } from '@podvirt/api/go-flags';
import { eventually } from '@podvirt/test-support';
import { runConsoleLogTail } from '../src/console-log/console-log-tail.js';
import { parseTailFlags } from '../src/console-log/tail-flags.js';
import { FileTail } from '../src/logs/file-tail.js';

test('podvirt-tail takes --logfile PATH or --logfile=PATH, ignores other flags, and requires the file', () => {
  assert.deepEqual(parseTailFlags(['--logfile', '/a/log', '-v', '3']), { logFile: '/a/log' });
  assert.deepEqual(parseTailFlags(['--logfile=/b']), { logFile: '/b' });
  assert.throws(() => parseTailFlags(['-v', '3']), (err: unknown) => err instanceof GoFlagError && err.flag === 'logfile' && /--logfile: a log file PATH is required/.test(err.message));
});

test('a log replaced by a new file (rename rotation) is read from the new file\'s start', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'podvirt-tail-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const path = join(dir, 'virt-serial0-log');
  const lines: string[] = [];
  const tail = new FileTail({ path, onLine: (l) => lines.push(l), intervalMs: 10_000 });
  t.after(() => tail.close());
  await writeFile(path, 'boot 1\nboot 2 longer line\n');
  await tail.poll();
  await rename(path, `${path}.1`);
  // Longer than what was read: without the inode check the old offset would cut into it.
  await writeFile(path, 'after the rotation, a longer first line\n');
  await tail.poll();
  assert.deepEqual(lines, ['boot 1', 'boot 2 longer line', 'after the rotation, a longer first line']);
});

test('the console log is printed from its start, CR LF as one line end, until stopped', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'podvirt-tail-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const path = join(dir, 'virt-serial0-log');
  await writeFile(path, 'Linux version 6.1\r\nPODVIRT-GUEST-READY\r\n');
  let out = '';
  const stop = new AbortController();
  const done = runConsoleLogTail({ logFile: path, write: (s) => (out += s), intervalMs: 5 }, stop.signal);
  await eventually(() => out.includes('READY'), { what: 'the log copied' });
  await appendFile(path, '/ # partial');
  stop.abort();
  await done;
  assert.equal(out, 'Linux version 6.1\nPODVIRT-GUEST-READY\n/ # partial\n');
});
