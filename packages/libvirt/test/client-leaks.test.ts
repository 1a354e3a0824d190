// Alone in its file (so in its own process): nothing from other tests is still winding down
// when the baseline of active handles is taken.
import assert from 'node:assert/strict';
import { createHook } from 'node:async_hooks';
import { getEventListeners } from 'node:events';
import { describe, it } from 'node:test';
import { setImmediate as tick } from 'node:timers/promises';
import { LibvirtClient, RemoteProc } from '../src/index.js';
import type { DomainRef } from '../src/index.js';
import { FakeDaemon } from './fake-daemon.js';

const dom: DomainRef = { name: 'vm1', uuid: Buffer.alloc(16, 1), id: 7 };

/**
 * Tracks timers created while enabled, unref'd ones included (getActiveResourcesInfo omits
 * those): the keepalive interval must be cleared too, not just left to die with the process.
 */
function trackTimers(): { live: () => number; stop: () => void } {
  const live = new Set<number>();
  const hook = createHook({
    init: (id, type) => { if (type === 'Timeout') live.add(id); },
    destroy: (id) => { live.delete(id); },
  }).enable();
  return { live: () => live.size, stop: () => hook.disable() };
}

/** Lets pending I/O callbacks run; immediates, unlike sleeps, create no Timeout to track. */
async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await tick();
}

describe('LibvirtClient resources', () => {
  it('leaves no timers, sockets or listeners behind', async () => {
    await settle();
    const before = process.getActiveResourcesInfo().filter((r) => r !== 'TTYWrap').sort();
    const timers = trackTimers();
    const daemon = new FakeDaemon();
    await daemon.listen();
    const client = await LibvirtClient.connect({ socketPath: daemon.socketPath, keepalive: { intervalMs: 10, count: 3 } });
    const ac = new AbortController();
    daemon.handlers.set(RemoteProc.DOMAIN_RESUME, () => ({}));
    await client.domainResume(dom, { signal: ac.signal, timeoutMs: 1000 });
    client.on('event', () => undefined);
    await client.close();
    await daemon.close();
    await settle();
    assert.equal(getEventListeners(ac.signal, 'abort').length, 0);
    timers.stop();
    assert.equal(timers.live(), 0, 'timers left running');
    assert.deepEqual(process.getActiveResourcesInfo().filter((r) => r !== 'TTYWrap').sort(), before);
  });

  it('leaves nothing behind when the daemon dies under it', async () => {
    await settle();
    const before = process.getActiveResourcesInfo().filter((r) => r !== 'TTYWrap').sort();
    const timers = trackTimers();
    const daemon = new FakeDaemon();
    await daemon.listen();
    const client = await LibvirtClient.connect({ socketPath: daemon.socketPath, keepalive: { intervalMs: 10, count: 3 } });
    daemon.handlers.set(RemoteProc.DOMAIN_SUSPEND, () => 'none');
    const pending = client.domainSuspend(dom, { timeoutMs: 60_000 }).catch((e: unknown) => e);
    while (daemon.calls(RemoteProc.DOMAIN_SUSPEND).length < 1) await tick();
    await daemon.close();
    assert.equal((await pending as Error).name, 'ConnectionClosedError');
    await settle();
    assert.equal(client.closed, true);
    timers.stop();
    assert.equal(timers.live(), 0, 'timers left running');
    assert.deepEqual(process.getActiveResourcesInfo().filter((r) => r !== 'TTYWrap').sort(), before);
  });
});
