// The grace clock under mock timers: resend cadence, destroy at the deadline, idempotent
// start, stop ends everything, and a hung shutdown request does not delay the destroy.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GraceClock } from '../src/grace-clock.js';

async function flush(): Promise<void> {
  for (let i = 0; i < 5; i++) await Promise.resolve();
}

test('re-sends shutdown every interval, destroys at the deadline, stops when told', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout', 'setInterval'] });
  let now = 1_000;
  const calls: string[] = [];
  const clock = new GraceClock({
    gracePeriodMs: 10_000,
    resendIntervalMs: 3_000,
    requestShutdown: () => { calls.push(`shutdown@${now}`); return Promise.resolve(); },
    destroy: () => { calls.push(`destroy@${now}`); return Promise.resolve(); },
    now: () => now,
  });
  assert.equal(clock.start(), true);
  assert.deepEqual(clock.state, { started: true, startedAtMs: 1_000, gracePeriodSeconds: 10, deadlineMs: 11_000 });
  assert.equal(clock.start(), false, 'a second start keeps the first deadline');
  await flush();
  for (const step of [3_000, 3_000, 3_000, 1_000, 2_000]) {
    now += step;
    t.mock.timers.tick(step);
    await flush();
  }
  assert.deepEqual(calls, ['shutdown@1000', 'shutdown@4000', 'shutdown@7000', 'shutdown@10000', 'destroy@11000', 'destroy@13000']);
  clock.stop();
  now += 10_000;
  t.mock.timers.tick(10_000);
  await flush();
  assert.equal(calls.length, 6, 'nothing after stop');
});

test('a hung shutdown request does not delay the destroy; errors are reported', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout', 'setInterval'] });
  let now = 0;
  const errors: string[] = [];
  let destroys = 0;
  const clock = new GraceClock({
    gracePeriodMs: 5_000,
    resendIntervalMs: 1_000,
    requestShutdown: () => new Promise<void>(() => {}),
    destroy: () => { destroys++; return Promise.reject(new Error('libvirt down')); },
    onError: (err, phase) => errors.push(`${phase}:${(err as Error).message}`),
    now: () => now,
  });
  clock.start();
  now = 5_000;
  t.mock.timers.tick(5_000);
  await flush();
  assert.equal(destroys, 1);
  assert.deepEqual(errors, ['destroy:libvirt down']);
  clock.stop();
});

test('stop before start makes start a no-op', () => {
  const clock = new GraceClock({ gracePeriodMs: 1, resendIntervalMs: 1, requestShutdown: () => Promise.resolve(), destroy: () => Promise.resolve() });
  clock.stop();
  assert.equal(clock.start(), false);
  assert.equal(clock.state.started, false);
});
