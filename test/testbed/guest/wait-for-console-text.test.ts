import assert from 'node:assert/strict';
import { appendFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { TestContext } from 'node:test';
import { waitForConsoleText } from './wait-for-console-text.js';

async function logFile(t: TestContext): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'podvirt-console-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return join(dir, 'serial0.log');
}

void test('finds a marker written after the wait began, then the next one after it', async (t) => {
  const log = await logFile(t);
  const waiting = waitForConsoleText(log, 'READY', { timeoutMs: 5000 });
  const timer = setTimeout(() => void appendFile(log, 'boot noise\r\nREADY uptime=1.7 boot=a\r\n'), 150);
  t.after(() => clearTimeout(timer));
  const first = await waiting;
  assert.equal(first.line, 'READY uptime=1.7 boot=a');
  await appendFile(log, 'READY uptime=1.6 boot=b\r\n');
  const second = await waitForConsoleText(log, 'READY', { from: first.end, timeoutMs: 5000 });
  assert.equal(second.line, 'READY uptime=1.6 boot=b');
});

void test('times out with the end of the log in the error', async (t) => {
  const log = await logFile(t);
  await appendFile(log, 'Kernel panic - not syncing\n');
  await assert.rejects(waitForConsoleText(log, 'READY', { timeoutMs: 300 }), (err: Error & { code?: string }) => {
    assert.equal(err.code, 'PODVIRT_TESTBED_CONSOLE_TIMEOUT');
    assert.match(err.message, /Kernel panic/);
    return true;
  });
});

void test('an aborted signal ends the wait', async (t) => {
  const log = await logFile(t);
  const ac = new AbortController();
  const waiting = waitForConsoleText(log, 'READY', { signal: ac.signal });
  ac.abort();
  await assert.rejects(waiting, { name: 'AbortError' });
});
