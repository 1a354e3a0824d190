import assert from 'node:assert/strict';
import { describe, it, mock } from 'node:test';
import { Keepalive, TimeoutError } from '../src/index.js';

describe('Keepalive', () => {
  it('pings only after a quiet interval and declares death after count missed pings', (t) => {
    t.mock.timers.enable({ apis: ['setInterval'] });
    const ping = mock.fn();
    const dead = mock.fn((_: TimeoutError) => undefined);
    const ka = new Keepalive({ intervalMs: 1000, count: 2 }, ping, dead);
    ka.start();
    ka.traffic();
    t.mock.timers.tick(1000); // traffic seen in this interval: no ping
    assert.equal(ping.mock.callCount(), 0);
    t.mock.timers.tick(1000);
    assert.equal(ping.mock.callCount(), 1);
    ka.traffic(); // the PONG (or anything else) resets the count
    t.mock.timers.tick(1000);
    t.mock.timers.tick(1000);
    t.mock.timers.tick(1000);
    assert.equal(ping.mock.callCount(), 3);
    assert.equal(dead.mock.callCount(), 0);
    t.mock.timers.tick(1000);
    assert.equal(dead.mock.callCount(), 1);
    assert.ok(dead.mock.calls[0]?.arguments[0] instanceof TimeoutError);
    t.mock.timers.tick(5000); // stopped itself: nothing more
    assert.equal(ping.mock.callCount(), 3);
    assert.equal(dead.mock.callCount(), 1);
  });

  it('stop() ends the pings', (t) => {
    t.mock.timers.enable({ apis: ['setInterval'] });
    const ping = mock.fn();
    const ka = new Keepalive({ intervalMs: 10, count: 5 }, ping, () => undefined);
    ka.start();
    ka.start(); // idempotent: one interval
    t.mock.timers.tick(10);
    assert.equal(ping.mock.callCount(), 1);
    ka.stop();
    t.mock.timers.tick(100);
    assert.equal(ping.mock.callCount(), 1);
  });
});
