import assert from 'node:assert/strict';
import { once } from 'node:events';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { ConnectionClosedError, TimeoutError } from '@podvirt/libvirt';
import { libvirtFixture } from './libvirt-fixture.js';

void test('a daemon killed mid-call rejects every pending call with ConnectionClosedError', async (t) => {
  const { daemon, client } = await libvirtFixture(t, { client: { keepalive: false } });
  assert.ok((await client.getHostname()).length > 0);
  // A stopped daemon reads nothing, so these calls are certainly in flight when it dies.
  daemon.kill('SIGSTOP');
  t.after(() => daemon.kill('SIGCONT'));
  const calls = Array.from({ length: 5 }, () => client.getHostname().then(() => 'answered', (e: unknown) => e));
  const closed = once(client, 'close');
  await sleep(50);
  const killedAt = performance.now();
  daemon.kill('SIGKILL');
  for (const result of await Promise.all(calls)) {
    assert.ok(result instanceof ConnectionClosedError, String(result));
    assert.equal(result.code, 'LIBVIRT_ERR_CLOSED');
  }
  await closed;
  const ms = performance.now() - killedAt;
  // Failed by the closed connection, not by a call timeout (ConnectionClosedError above).
  t.diagnostic(`pending calls failed ${ms.toFixed(0)} ms after the kill`);
  await assert.rejects(client.getHostname(), ConnectionClosedError);
  await client.close(); // closing a dead client is fine, and idempotent
});

void test('keepalive: the daemon pings an idle client, which answers and stays connected', async (t) => {
  // The daemon pings after 1 s of silence and drops a client that misses one PONG. Our own
  // PINGs are off, so only our answers keep the connection up.
  const { client } = await libvirtFixture(t, {
    settings: { keepalive_interval: 1, keepalive_count: 1 },
    client: { keepalive: false },
  });
  await sleep(3500); // longer than the daemon waits for an unanswered PING
  assert.equal(client.closed, false);
  assert.ok((await client.getHostname()).length > 0);
});

void test('keepalive: a frozen daemon is declared dead after the missed PINGs', async (t) => {
  const { daemon, client } = await libvirtFixture(t, { client: { keepalive: { intervalMs: 200, count: 2 } } });
  assert.ok((await client.getHostname()).length > 0);
  daemon.kill('SIGSTOP');
  t.after(() => daemon.kill('SIGCONT'));
  const pending = client.getHostname().then(() => 'answered', (e: unknown) => e);
  const stoppedAt = performance.now();
  const [error] = await once(client, 'close');
  const ms = performance.now() - stoppedAt;
  daemon.kill('SIGCONT'); // let the daemon shut down promptly in cleanup
  assert.ok(error instanceof TimeoutError, String(error));
  t.diagnostic(`keepalive gave up after ${ms.toFixed(0)} ms`);
  const result = await pending;
  assert.ok(result instanceof ConnectionClosedError);
  assert.ok(result.cause instanceof TimeoutError);
});
