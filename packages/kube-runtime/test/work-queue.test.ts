import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ItemBackoff } from '../src/item-backoff.js';
import { WorkQueue } from '../src/work-queue.js';

test('a key is queued once however often it is added', async () => {
  const q = new WorkQueue();
  q.add('a');
  q.add('b');
  q.add('a');
  assert.equal(q.length, 2);
  assert.equal(await q.get(), 'a');
  assert.equal(await q.get(), 'b');
  assert.equal(q.length, 0);
});

test('a key is never handed to two workers; re-added while processing it comes back after done', async () => {
  const q = new WorkQueue();
  q.add('a');
  const first = await q.get();
  assert.equal(first, 'a');
  q.add('a');
  q.add('a');
  assert.equal(q.length, 0, 'held back while a worker has it');
  const second = q.get();
  let handed: string | undefined;
  void second.then((k) => (handed = k));
  await new Promise((r) => setImmediate(r));
  assert.equal(handed, undefined);
  q.done('a');
  assert.equal(await second, 'a');
  q.done('a');
  assert.equal(q.length, 0, 'processed exactly once more');
});

test('waiting workers get keys as they arrive and undefined at shutdown', async () => {
  const q = new WorkQueue();
  const w1 = q.get();
  const w2 = q.get();
  q.add('x');
  assert.equal(await w1, 'x');
  q.shutDown();
  assert.equal(await w2, undefined);
  q.add('y');
  assert.equal(await q.get(), undefined);
});

test('get() returns undefined when its signal aborts', async () => {
  const q = new WorkQueue();
  const ac = new AbortController();
  const pending = q.get(ac.signal);
  ac.abort();
  assert.equal(await pending, undefined);
  q.add('k');
  assert.equal(await q.get(), 'k', 'the aborted waiter did not swallow the key');
});

test('per-key exponential backoff with a cap, reset by forget', () => {
  const b = new ItemBackoff({ baseDelayMs: 5, maxDelayMs: 100 });
  assert.deepEqual([1, 2, 3, 4, 5, 6].map(() => b.next('k')), [5, 10, 20, 40, 80, 100]);
  assert.equal(b.next('other'), 5, 'keys back off independently');
  b.forget('k');
  assert.equal(b.next('k'), 5);
  for (let i = 0; i < 2000; i++) b.next('k');
  assert.equal(b.next('k'), 100, 'stays finite and capped');
});

test('addRateLimited and addAfter wait on timers; the earliest pending add wins', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout', 'Date'] });
  const q = new WorkQueue({ baseDelayMs: 10, maxDelayMs: 1000 });
  assert.equal(q.addRateLimited('a'), 10);
  assert.equal(q.addRateLimited('a'), 20);
  assert.equal(q.numRequeues('a'), 2);
  t.mock.timers.tick(9);
  assert.equal(q.length, 0);
  t.mock.timers.tick(1);
  assert.equal(q.length, 1, 'the 10 ms add fired; the later 20 ms one was dropped');
  assert.equal(await q.get(), 'a');
  q.done('a');
  t.mock.timers.tick(50);
  assert.equal(q.length, 0);

  q.addAfter('b', 500);
  q.addAfter('b', 100);
  t.mock.timers.tick(100);
  assert.equal(q.length, 1);
  assert.equal(await q.get(), 'b');
  q.done('b');
  t.mock.timers.tick(1000);
  assert.equal(q.length, 0, 'the replaced 500 ms timer is gone');

  q.addAfter('c', 100);
  q.shutDown();
  t.mock.timers.tick(200);
  assert.equal(q.length, 0, 'shutdown drops delayed adds');
});

test('idle() resolves when the last key is done', async () => {
  const q = new WorkQueue();
  q.add('a');
  const k = await q.get();
  assert.equal(k, 'a');
  let idle = false;
  const waiting = q.idle().then(() => (idle = true));
  await new Promise((r) => setImmediate(r));
  assert.equal(idle, false);
  q.done('a');
  await waiting;
  assert.equal(idle, true);
});

async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await Promise.resolve();
}

test('three workers never hold the same key at once', async () => {
  const q = new WorkQueue();
  const inFlight = new Set<string>();
  let overlaps = 0;
  let processed = 0;
  const worker = async (): Promise<void> => {
    for (;;) {
      const key = await q.get();
      if (key === undefined) return;
      if (inFlight.has(key)) overlaps++;
      inFlight.add(key);
      await settle();
      inFlight.delete(key);
      processed++;
      q.done(key);
    }
  };
  const workers = [worker(), worker(), worker()];
  for (let round = 0; round < 20; round++) {
    q.add(String(round % 3));
    await Promise.resolve();
  }
  while (q.length > 0 || inFlight.size > 0) await settle();
  q.shutDown();
  await Promise.all(workers);
  assert.equal(overlaps, 0);
  assert.ok(processed >= 3 && processed <= 20, `processed ${processed}`);
});

test('an aborted get() leaves the other waiters alone; shutDown drops delayed adds and refuses new keys', async () => {
  const q = new WorkQueue();
  const controller = new AbortController();
  const aborted = q.get(controller.signal);
  const other = q.get();
  controller.abort();
  assert.equal(await aborted, undefined);
  q.add('k');
  assert.equal(await other, 'k');
  const waiting = q.get();
  q.addAfter('late', 60_000);
  q.shutDown();
  q.shutDown();
  assert.equal(await waiting, undefined);
  q.add('x');
  assert.equal(await q.get(), undefined);
  assert.equal(q.shuttingDown, true);
});
