import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, mock, test } from 'node:test';
import { pino } from 'pino';
import { ControllerError } from '../src/controller-error.js';
import { LeaderElector, type LeaderElectorOptions, type LeadershipEnd } from '../src/leader/leader-elector.js';
import type { LeaseClient, LeaseRecord } from '../src/leader/lease-client.js';

const log = pino({ level: 'silent' });

/** One Lease in memory, with resourceVersion checks, shared by the replicas of a test. */
class FakeLease {
  record: LeaseRecord | undefined;
  writes = 0;
  #rv = 0;

  client(partitioned: { value: boolean } = { value: false }): LeaseClient {
    const check = (): void => {
      if (partitioned.value) throw new ControllerError('CONTROLLER_ERR_API_FAILED', 'connection refused');
    };
    return {
      get: async () => {
        await Promise.resolve();
        check();
        return this.record && { ...this.record };
      },
      create: async (record) => {
        await Promise.resolve();
        check();
        if (this.record) throw new ControllerError('CONTROLLER_ERR_CONFLICT', 'already exists');
        return this.#store(record);
      },
      update: async (record) => {
        await Promise.resolve();
        check();
        if (record.resourceVersion !== this.record?.resourceVersion) throw new ControllerError('CONTROLLER_ERR_CONFLICT', 'modified');
        return this.#store(record);
      },
    };
  }

  #store(record: LeaseRecord): LeaseRecord {
    this.writes++;
    this.record = { ...record, resourceVersion: String(++this.#rv) };
    return { ...this.record };
  }
}

async function flush(): Promise<void> {
  for (let i = 0; i < 4; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

/** Moves the fake clock in small steps, letting the async work between timers run. */
async function advance(ms: number): Promise<void> {
  for (let left = ms; left > 0; left -= 100) {
    mock.timers.tick(Math.min(100, left));
    await flush();
  }
}

/** Replicas a and b on one Lease (a can be cut off from it), and leader work that records who led until its leadership ends. */
function twoReplicas(timings: Partial<LeaderElectorOptions> = {}) {
  const lease = new FakeLease();
  const partitionA = { value: false };
  const a = new LeaderElector({ client: lease.client(partitionA), identity: 'a', log, ...timings });
  const b = new LeaderElector({ client: lease.client(), identity: 'b', log, ...timings });
  const led: string[] = [];
  const work = (who: string) => async (signal: AbortSignal): Promise<void> => {
    led.push(who);
    await new Promise((resolve) => signal.addEventListener('abort', resolve));
  };
  return { lease, partitionA, a, b, stop: new AbortController(), led, work };
}

describe('LeaderElector', () => {
  beforeEach(() => mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 1_000_000 }));
  afterEach(() => mock.timers.reset());

  test('acquires a missing Lease, renews it every 2 s, releases it on stop', async () => {
    const lease = new FakeLease();
    const elector = new LeaderElector({ client: lease.client(), identity: 'a', log });
    const stop = new AbortController();
    let leading: AbortSignal | undefined;
    const run = elector.run(stop.signal, async (signal) => {
      leading = signal;
      await new Promise((resolve) => signal.addEventListener('abort', resolve));
    });
    await flush();
    assert.equal(elector.isLeader, true);
    assert.equal(lease.record?.holderIdentity, 'a');
    assert.equal(lease.record?.leaseDurationSeconds, 15);
    assert.equal(lease.record?.leaseTransitions, 0);
    const firstRenew = lease.record?.renewTime?.getTime() ?? 0;
    await advance(2_000);
    assert.equal((lease.record?.renewTime?.getTime() ?? 0) - firstRenew, 2_000);
    await advance(4_000);
    assert.equal(lease.writes, 4, 'one create and three renewals');
    stop.abort();
    await flush();
    assert.equal(await run, 'stopped');
    assert.equal(leading?.aborted, true);
    assert.equal(elector.isLeader, false);
    assert.equal(lease.record?.holderIdentity, '');
    assert.equal(lease.record?.leaseDurationSeconds, 1);
  });

  test('a follower waits while the leader renews, and takes over 15 s after the leader went silent', async () => {
    const { lease, partitionA, a, b, stop, led, work } = twoReplicas();
    const runA = a.run(stop.signal, work('a'));
    await flush();
    const runB = b.run(stop.signal, work('b'));
    await advance(30_000);
    assert.deepEqual(led, ['a'], 'b never leads while a renews');
    assert.equal(b.isLeader, false);
    partitionA.value = true;
    const cutAt = Date.now();
    let endA: LeadershipEnd | undefined;
    void runA.then((end) => (endA = end));
    await advance(10_000);
    assert.equal(endA, 'lost', 'a steps down after the 10 s renew deadline');
    assert.equal(a.isLeader, false);
    await advance(4_000);
    assert.deepEqual(led, ['a'], 'b still respects the lease duration');
    // b measures 15 s from when it saw the last renewal, and polls every 2 s: at most 19 s.
    await advance(6_000);
    assert.deepEqual(led, ['a', 'b']);
    assert.equal(lease.record?.holderIdentity, 'b');
    assert.equal(lease.record?.leaseTransitions, 1);
    const takeover = (lease.record?.acquireTime?.getTime() ?? 0) - cutAt;
    assert.ok(takeover >= 15_000 && takeover <= 19_000, `took over after ${takeover} ms`);
    stop.abort();
    await flush();
    assert.equal(await runB, 'stopped');
  });

  test('takes the --leader-elect-* timings: renews every retry period, steps down at the renew deadline, a follower waits out the lease duration', async () => {
    const { lease, partitionA, a, b, stop, led, work } = twoReplicas({ leaseDurationMs: 6_000, renewDeadlineMs: 4_000, renewIntervalMs: 1_000, retryIntervalMs: 1_000 });
    const runA = a.run(stop.signal, work('a'));
    await flush();
    assert.equal(lease.record?.leaseDurationSeconds, 6);
    const writesBefore = lease.writes;
    await advance(5_000);
    assert.equal(lease.writes - writesBefore, 5, 'one renewal a second');
    const runB = b.run(stop.signal, work('b'));
    await advance(10_000);
    assert.deepEqual(led, ['a']);
    partitionA.value = true;
    const cutAt = Date.now();
    let endA: LeadershipEnd | undefined;
    void runA.then((end) => (endA = end));
    await advance(3_000);
    assert.equal(endA, undefined, 'a still within its 4 s renew deadline');
    await advance(1_000);
    assert.equal(endA, 'lost', 'a steps down at the 4 s renew deadline');
    await advance(1_500);
    assert.deepEqual(led, ['a'], 'b respects the 6 s lease duration');
    // b measures 6 s from when it saw the last renewal (at most 1 s before the cut), and polls every second.
    await advance(1_500);
    assert.deepEqual(led, ['a', 'b']);
    const takeover = (lease.record?.acquireTime?.getTime() ?? 0) - cutAt;
    assert.ok(takeover >= 5_000 && takeover <= 7_000, `took over after ${takeover} ms`);
    stop.abort();
    await flush();
    assert.equal(await runB, 'stopped');
  });

  test('stopping before ever leading does not touch the Lease', async () => {
    const lease = new FakeLease();
    lease.record = { holderIdentity: 'other', leaseDurationSeconds: 15, renewTime: new Date(), resourceVersion: '9' };
    const elector = new LeaderElector({ client: lease.client(), identity: 'a', log });
    const stop = new AbortController();
    const run = elector.run(stop.signal, () => Promise.reject(new Error('must not run')));
    await advance(4_000);
    stop.abort();
    await flush();
    assert.equal(await run, 'stopped');
    assert.equal(lease.record.holderIdentity, 'other');
    assert.equal(lease.writes, 0);
  });

  test('leader work that fails ends the leadership and hands the Lease back', async () => {
    const lease = new FakeLease();
    const elector = new LeaderElector({ client: lease.client(), identity: 'a', log });
    const run = elector.run(new AbortController().signal, () => Promise.reject(new Error('boom')));
    await flush();
    await advance(2_000);
    assert.equal(await run, 'stopped');
    assert.equal(lease.record?.holderIdentity, '');
  });
});
