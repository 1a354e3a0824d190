import assert from 'node:assert/strict';
import { afterEach, beforeEach, mock, test } from 'node:test';
import { abortableSleep } from '../src/abortable-sleep.js';

beforeEach(() => mock.timers.enable({ apis: ['setTimeout'] }));
afterEach(() => mock.timers.reset());

const settled = async (p: Promise<void>): Promise<boolean> => {
  let done = false;
  void p.then(() => (done = true));
  for (let i = 0; i < 3; i++) await new Promise<void>((resolve) => setImmediate(resolve));
  return done;
};

test('ends when its time is up, on a fake clock', async () => {
  const stop = new AbortController();
  const sleep = abortableSleep(1_000, stop.signal);
  mock.timers.tick(999);
  assert.equal(await settled(sleep), false);
  mock.timers.tick(1);
  assert.equal(await settled(sleep), true);
});

test('ends at once, without an error, when its signal aborts, and does not hold the signal', async () => {
  const stop = new AbortController();
  const sleep = abortableSleep(60_000, stop.signal);
  stop.abort();
  assert.equal(await settled(sleep), true);
  assert.equal(await settled(abortableSleep(60_000, stop.signal)), true, 'an aborted signal does not wait');
  const kept = new AbortController();
  const short = abortableSleep(10, kept.signal);
  mock.timers.tick(10);
  await short;
  let heard = 0;
  kept.signal.addEventListener('abort', () => heard++);
  kept.abort();
  assert.equal(heard, 1, 'only the listener added here is left on the signal');
});
