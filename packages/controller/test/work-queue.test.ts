import assert from 'node:assert/strict';
import { describe, mock, test } from 'node:test';
import { WorkQueue } from '../src/work-queue.js';

async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await Promise.resolve();
}

describe('WorkQueue', () => {
  test('a key waits in the queue once, however often it is added', async () => {
    const q = new WorkQueue<string>();
    q.add('a');
    q.add('b');
    q.add('a');
    assert.equal(q.length, 2);
    assert.equal(await q.get(), 'a');
    assert.equal(await q.get(), 'b');
    assert.equal(q.length, 0);
  });

  test('a key in flight is not handed out again; added meanwhile, it returns after done()', async () => {
    const q = new WorkQueue<string>();
    q.add('a');
    assert.equal(await q.get(), 'a');
    q.add('a');
    q.add('a');
    assert.equal(q.length, 0, 'held back while in flight');
    let second: string | undefined;
    void q.get().then((k) => (second = k));
    await settle();
    assert.equal(second, undefined);
    q.done('a');
    await settle();
    assert.equal(second, 'a');
    q.done('a');
    assert.equal(q.length, 0, 'queued once, not twice');
  });

  test('two workers never hold the same key at once', async () => {
    const q = new WorkQueue<number>();
    const inFlight = new Set<number>();
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
      q.add(round % 3);
      await Promise.resolve();
    }
    while (q.length > 0 || inFlight.size > 0) await settle();
    q.shutDown();
    await Promise.all(workers);
    assert.equal(overlaps, 0);
    assert.ok(processed >= 3 && processed <= 20, `processed ${processed}`);
  });

  test('addRateLimited backs off exponentially per key until forget()', () => {
    mock.timers.enable({ apis: ['setTimeout', 'Date'] });
    try {
      const q = new WorkQueue<string>({ baseDelayMs: 10, maxDelayMs: 50 });
      assert.deepEqual([0, 1, 2, 3, 4].map((n) => q.backoffFor(n)), [10, 20, 40, 50, 50]);
      q.addRateLimited('a');
      assert.equal(q.retries('a'), 1);
      mock.timers.tick(9);
      assert.equal(q.length, 0);
      mock.timers.tick(1);
      assert.equal(q.length, 1);
      void q.get();
      q.done('a');
      q.addRateLimited('a');
      mock.timers.tick(19);
      assert.equal(q.length, 0, 'second retry waits 20 ms');
      mock.timers.tick(1);
      assert.equal(q.length, 1);
      q.forget('a');
      assert.equal(q.retries('a'), 0);
      q.shutDown();
    } finally {
      mock.timers.reset();
    }
  });

  test('addAfter keeps the earliest of several delays', () => {
    mock.timers.enable({ apis: ['setTimeout', 'Date'] });
    try {
      const q = new WorkQueue<string>();
      q.addAfter('a', 100);
      q.addAfter('a', 30);
      q.addAfter('a', 200);
      mock.timers.tick(30);
      assert.equal(q.length, 1);
      mock.timers.tick(300);
      assert.equal(q.length, 1, 'the later timers were dropped');
      q.shutDown();
    } finally {
      mock.timers.reset();
    }
  });

  test('shutDown wakes waiting workers, drops delays and refuses new keys', async () => {
    const q = new WorkQueue<string>();
    const waiting = q.get();
    q.addAfter('late', 60_000);
    q.shutDown();
    q.shutDown();
    assert.equal(await waiting, undefined);
    q.add('x');
    assert.equal(await q.get(), undefined);
    assert.equal(q.isShutDown, true);
  });

  test('get() resolves undefined when its signal aborts, and leaves other waiters alone', async () => {
    const q = new WorkQueue<string>();
    const controller = new AbortController();
    const aborted = q.get(controller.signal);
    const other = q.get();
    controller.abort();
    assert.equal(await aborted, undefined);
    q.add('k');
    assert.equal(await other, 'k');
    q.shutDown();
  });
});
