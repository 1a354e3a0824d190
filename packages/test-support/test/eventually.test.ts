import assert from 'node:assert/strict';
import { test } from 'node:test';
import { eventually } from '../src/index.js';

test('eventually resolves once the condition holds, sync or async', async () => {
  let n = 0;
  await eventually(() => ++n >= 3, { stepMs: 1 });
  assert.equal(n, 3);
  await eventually(() => Promise.resolve(true));
});

test('eventually fails at its deadline, naming what it waited for', async () => {
  await assert.rejects(eventually(() => false, { deadlineMs: 20, stepMs: 1, what: 'the socket' }), /the socket not met within 20 ms/);
});
