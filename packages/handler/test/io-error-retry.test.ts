// The pacing of resumes after I/O-error pauses, on a fake clock: KubeVirt's 10 s first wait,
// doubling to 3 min, and a fresh start for a VM that stayed running for 30 s.
import assert from 'node:assert/strict';
import { mock, test } from 'node:test';
import { IO_ERROR_RETRY, IoErrorRetry, pausedByIoError } from '../src/reconcile/io-error-retry.js';
import { cmd } from '@podvirt/proto';

const S = 1_000;

function clock(t: { after(fn: () => void): void }) {
  mock.timers.enable({ apis: ['Date'], now: 1_000_000 });
  t.after(() => mock.timers.reset());
  return { retry: new IoErrorRetry(() => Date.now()), tick: (ms: number) => mock.timers.tick(ms) };
}

test("KubeVirt's defaults: 10 s doubling to 3 min, reset after 30 s of running", () => {
  assert.deepEqual(IO_ERROR_RETRY, { initialMs: 10 * S, maxMs: 180 * S, settleMs: 30 * S });
});

test('a disk that stays full: resumed at once, then after 10, 20, 40, 80, 160, 180, 180 s', (t) => {
  const { retry, tick } = clock(t);
  // Each round: the reconcile resumes (undefined), qemu pauses again 50 ms later, the
  // reconcile that sees the pause is told to wait; when the wait is over, it resumes again.
  const waits: number[] = [];
  let resumes = 0;
  assert.equal(retry.delayMs('u1'), undefined, 'the first I/O-error pause is resumed at once');
  resumes += 1;
  for (let round = 0; round < 7; round++) {
    tick(50);
    const wait = retry.delayMs('u1');
    assert.ok(wait !== undefined, `round ${String(round)}: the pause right after a resume waits`);
    // Reconciles in between (status echoes, resyncs) are told to wait for the rest.
    tick(1_000);
    assert.equal(retry.delayMs('u1'), wait - 1_000);
    tick(wait - 1_000);
    assert.equal(retry.delayMs('u1'), 1, 'not before the wait is over');
    tick(1);
    assert.equal(retry.delayMs('u1'), undefined, 'resumed when the wait is over');
    resumes += 1;
    waits.push(wait + 50);
  }
  assert.deepEqual(waits, [10, 20, 40, 80, 160, 180, 180].map((s) => s * S));
  assert.equal(resumes, 8);
});

test('a VM that stayed running for 30 s after its resume starts again from no wait', (t) => {
  const { retry, tick } = clock(t);
  assert.equal(retry.delayMs('u1'), undefined);
  tick(100);
  assert.equal(retry.delayMs('u1'), 10 * S - 100);
  tick(10 * S);
  assert.equal(retry.delayMs('u1'), undefined, 'resumed; the next wait would be 20 s');
  tick(30 * S + 1);
  assert.equal(retry.delayMs('u1'), undefined, 'a pause long after the resume is a new failure');
  tick(100);
  assert.equal(retry.delayMs('u1'), 10 * S - 100, 'and its wait starts from 10 s again');
});

test('the state of each VMI is its own, dropped on forget and once the VM settles', (t) => {
  const { retry, tick } = clock(t);
  assert.equal(retry.delayMs('u1'), undefined);
  assert.equal(retry.delayMs('u2'), undefined);
  tick(10);
  assert.equal(retry.delayMs('u1'), 10 * S - 10);
  assert.equal(retry.size, 2);
  retry.forget('u1');
  assert.equal(retry.size, 1);
  tick(30 * S + 1);
  assert.equal(retry.delayMs('u3'), undefined);
  assert.equal(retry.size, 1, 'u2 stayed running for 30 s and was dropped');
});

test('only a domain paused by an I/O error counts, never one the user paused', () => {
  const d = (p: Partial<cmd.Domain>) => cmd.Domain.fromPartial({ state: 'Paused', reason: 'IOError', ...p });
  assert.equal(pausedByIoError(d({})), true);
  assert.equal(pausedByIoError(d({ pausedByUser: true })), false);
  assert.equal(pausedByIoError(d({ reason: 'User' })), false);
  assert.equal(pausedByIoError(d({ state: 'Running', reason: 'Unpaused' })), false);
  assert.equal(pausedByIoError(d({ deleted: true })), false);
  assert.equal(pausedByIoError(undefined), false);
});

test('a reconcile that sees the domain running holds its Sync while a round waits, not after 30 s of running', (t) => {
  const { retry, tick } = clock(t);
  assert.equal(retry.holdMs('u1'), undefined, 'no round, no hold');
  assert.equal(retry.delayMs('u1'), undefined);
  tick(100);
  assert.equal(retry.holdMs('u1'), 10 * S - 100, 'a stale Running view right after the resume');
  assert.equal(retry.delayMs('u1'), 10 * S - 100);
  tick(10 * S);
  assert.equal(retry.holdMs('u1'), undefined, 'the round is due');
  assert.equal(retry.delayMs('u1'), undefined);
  tick(1_000);
  assert.equal(retry.holdMs('u1'), 19 * S);
  tick(30 * S);
  assert.equal(retry.holdMs('u1'), undefined, 'running for 30 s: done');
  assert.equal(retry.size, 0);
});

test('a pause first seen after its round was due starts the next round at once', (t) => {
  const { retry, tick } = clock(t);
  assert.equal(retry.delayMs('u1'), undefined);
  // qemu paused again right after the resume, but no event showed it until the round was due.
  tick(10 * S + 1);
  assert.equal(retry.delayMs('u1'), undefined, 'resumed: the round was due');
  assert.equal(retry.holdMs('u1'), 20 * S, 'the handler looks again when the next round is due');
  tick(20 * S);
  assert.equal(retry.delayMs('u1'), 1);
  tick(1);
  assert.equal(retry.delayMs('u1'), undefined);
  assert.equal(retry.holdMs('u1'), 40 * S);
});
