// The guest's clock after an unpause: set through the agent a second later, retried a second
// apart for up to a minute, replaced by a newer request, stopped by cancel() and close(). The
// waits are injected, so nothing here depends on the wall clock.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pino, type Logger } from 'pino';
import { CLOCK_ATTEMPTS, CLOCK_RETRY_MS, GuestClock } from '../src/domain/guest-clock.js';

const T0 = Date.parse('2026-01-01T00:00:00Z');

function logCapture(): { log: Logger; lines: () => Array<{ msg: string; attempt?: number; attempts?: number }> } {
  const out: string[] = [];
  const log = pino({ level: 'info' }, { write: (line: string) => void out.push(line) });
  return { log, lines: () => out.map((l) => JSON.parse(l) as { msg: string }) };
}

test('the clock is set a second after the unpause from the host\'s time; an agent that refuses is asked again a second apart', async () => {
  const { log, lines } = logCapture();
  const sets: number[] = [];
  const waits: number[] = [];
  let refusals = 2;
  let now = T0;
  const clock = new GuestClock({
    log,
    now: () => now,
    wait: (ms) => {
      waits.push(ms);
      now += ms;
      return Promise.resolve();
    },
    setTime: (ms) => {
      if (refusals-- > 0) return Promise.reject(new Error('QEMU guest agent is not connected'));
      sets.push(ms);
      return Promise.resolve();
    },
  });
  await clock.sync();
  assert.deepEqual(sets, [T0 + 3 * CLOCK_RETRY_MS]);
  assert.deepEqual(waits, [CLOCK_RETRY_MS, CLOCK_RETRY_MS, CLOCK_RETRY_MS]);
  assert.deepEqual(lines().map((l) => `${l.msg}/${l.attempt}`), ['guest clock set/3']);
});

test('an agent that never takes it: a minute of tries, then one warning', async () => {
  const { log, lines } = logCapture();
  let tries = 0;
  const clock = new GuestClock({ log, wait: () => Promise.resolve(), setTime: () => Promise.reject(new Error(`refused ${++tries}`)) });
  await clock.sync();
  assert.equal(tries, CLOCK_ATTEMPTS);
  assert.deepEqual(lines().map((l) => l.msg), ['guest clock not set: the guest agent did not take it']);
});

test('a newer request replaces one still waiting, cancel() and close() stop it; none of them tried', async () => {
  const { log, lines } = logCapture();
  let tries = 0;
  // A wait that ends only when its series is aborted.
  const wait = (_ms: number, signal: AbortSignal): Promise<void> => new Promise((_, reject) => {
    if (signal.aborted) reject(signal.reason as Error);
    else signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true });
  });
  const clock = new GuestClock({ log, wait, setTime: () => Promise.reject(new Error(`refused ${++tries}`)) });
  const first = clock.sync();
  const second = clock.sync();
  await first;
  clock.cancel();
  await second;
  const third = clock.sync();
  await clock.close();
  await third;
  assert.equal(tries, 0, 'each series stopped in its first wait');
  assert.deepEqual(lines(), [], 'a replaced, cancelled or closed series logs nothing');
});
