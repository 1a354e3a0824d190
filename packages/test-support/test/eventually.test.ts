import assert from 'node:assert/strict';
import { test } from 'node:test';
import { eventually } from '../src/index.js';

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
