import assert from 'node:assert/strict';
import { test } from 'node:test';
import { eventually, EventuallyTimeoutError } from '../src/index.js';

test('eventually resolves once the condition holds, sync or async', async () => {
  let n = 0;
  await eventually(() => ++n >= 3, { stepMs: 1 });
  assert.equal(n, 3);
  await eventually(() => Promise.resolve(true));
});

test('eventually resolves with what the check found', async () => {
  let n = 0;
  assert.equal(await eventually(() => (++n >= 3 ? `pid ${n}` : undefined), { stepMs: 1 }), 'pid 3');
  assert.equal(await eventually(async () => 0), 0, 'zero is a value, not a miss');
});

test('eventually fails at its deadline, naming what it waited for', async () => {
  await assert.rejects(eventually(() => false, { deadlineMs: 20, stepMs: 1, what: 'the socket' }), /the socket not met within 20 ms/);
});

test('eventually adds its detail to the failure, read at the deadline', async () => {
  let last = 0;
  await assert.rejects(
    eventually(() => (++last, false), { deadlineMs: 20, stepMs: 1, what: 'the domain', detail: () => `last seen: ${last}` }),
    (err: Error) => /the domain not met within 20 ms\nlast seen: \d+$/.test(err.message) && !err.message.endsWith('last seen: 0'),
  );
});

test('eventually fails at its deadline with a coded error a caller can tell from the check\'s own', async () => {
  await assert.rejects(eventually(() => undefined, { deadlineMs: 5, stepMs: 1 }), (err: unknown) => err instanceof EventuallyTimeoutError && err.code === 'TEST_SUPPORT_ERR_TIMEOUT');
  await assert.rejects(eventually(() => { throw new Error('the check broke'); }), (err: unknown) => !(err instanceof EventuallyTimeoutError) && /the check broke/.test((err as Error).message));
});

test('eventually ends with the signal\'s reason: before the first check, and during a pause', async () => {
  let checks = 0;
  await assert.rejects(eventually(() => (++checks, false), { signal: AbortSignal.abort(new Error('stopped early')) }), /stopped early/);
  assert.equal(checks, 0, 'an aborted signal stops the wait before any check');
  const ac = new AbortController();
  const waiting = eventually(() => (++checks, false), { stepMs: 60_000, deadlineMs: 120_000, signal: ac.signal });
  await eventually(() => checks === 1);
  ac.abort(new Error('stopped in the pause'));
  await assert.rejects(waiting, /stopped in the pause/);
  assert.equal(checks, 1);
});
