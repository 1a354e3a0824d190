import assert from 'node:assert/strict';
import { getEventListeners, once } from 'node:events';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  AbortError, ConnectionClosedError, KEEPALIVE_PROGRAM, KeepaliveProc, LibvirtClient, LibvirtError, MessageType,
  ProtocolError, REMOTE_PROGRAM, RemoteProc, TimeoutError, XdrReader, isNotFound, writeDomainRef,
} from '../src/index.js';
import { eventually } from '@podvirt/test-support';
import type { ConnectOptions, DomainEvent, DomainRef } from '../src/index.js';
import { FakeDaemon } from './fake-daemon.js';
import type { TestContext } from 'node:test';

const dom: DomainRef = { name: 'vm1', uuid: Buffer.alloc(16, 1), id: 7 };

async function setup(t: TestContext, options: Partial<ConnectOptions> = {}): Promise<{ daemon: FakeDaemon; client: LibvirtClient }> {
  const daemon = new FakeDaemon();
  await daemon.listen();
  t.after(() => daemon.close());
  const client = await LibvirtClient.connect({ socketPath: daemon.socketPath, keepalive: false, ...options });
  t.after(() => client.destroy());
  return { daemon, client };
}

/** A handler that answers only when the test says so. */
function gate(): { wait: Promise<void>; open: () => void } {
  let open = (): void => undefined;
  const wait = new Promise<void>((resolve) => { open = resolve; });
  return { wait, open };
}

describe('LibvirtClient against a fake daemon', () => {
  it('does the handshake: auth list, keepalive feature, open with the URI', async (t) => {
    const { daemon } = await setup(t, { uri: 'qemu:///session' });
    const seq = daemon.received.map((r) => r.header.proc);
    assert.deepEqual(seq, [RemoteProc.AUTH_LIST, RemoteProc.CONNECT_SUPPORTS_FEATURE, RemoteProc.CONNECT_OPEN]);
    const open = daemon.calls(RemoteProc.CONNECT_OPEN)[0];
    assert.equal(new XdrReader(open?.body ?? Buffer.alloc(0)).optional((r) => r.string(100)), 'qemu:///session');
  });

  it('decodes replies and names domain state', async (t) => {
    const { daemon, client } = await setup(t);
    daemon.handlers.set(RemoteProc.CONNECT_GET_HOSTNAME, () => ({ body: (w) => w.string('node-a', 100) }));
    daemon.handlers.set(RemoteProc.DOMAIN_GET_STATE, () => ({ body: (w) => w.int(3).int(1) }));
    assert.equal(await client.getHostname(), 'node-a');
    const state = await client.domainGetState(dom);
    assert.equal(`${state.state}/${state.reason}`, 'PAUSED/USER');
  });

  it('rejects with LibvirtError carrying the daemon code', async (t) => {
    const { daemon, client } = await setup(t);
    daemon.handlers.set(RemoteProc.DOMAIN_LOOKUP_BY_NAME, () => ({ error: { code: 42, message: 'no domain' } }));
    const err = await client.domainLookupByName('nope').catch((e: unknown) => e);
    assert.ok(err instanceof LibvirtError);
    assert.equal(err.codeName, 'NO_DOMAIN');
    assert.ok(isNotFound(err));
  });

  it('multiplexes 200 concurrent calls whose replies come back out of order', async (t) => {
    const { daemon, client } = await setup(t);
    daemon.handlers.set(RemoteProc.DOMAIN_LOOKUP_BY_NAME, async ({ body }) => {
      const name = new XdrReader(body).string(100);
      await sleep(Number(name) % 7); // later calls often answer first
      return { body: (w) => writeDomainRef(w, { name, uuid: Buffer.alloc(16), id: Number(name) }) };
    });
    const names = Array.from({ length: 200 }, (_, i) => String(i));
    const refs = await Promise.all(names.map((n) => client.domainLookupByName(n)));
    assert.deepEqual(refs.map((r) => r.id), names.map(Number));
  });

  it('rejects every pending call with ConnectionClosedError when the daemon dies, and emits close', async (t) => {
    const { daemon, client } = await setup(t);
    daemon.handlers.set(RemoteProc.DOMAIN_SUSPEND, () => 'none');
    const closed = once(client, 'close');
    const pending = [client.domainSuspend(dom), client.domainSuspend(dom), client.domainSuspend(dom)];
    await eventually(() => daemon.calls(RemoteProc.DOMAIN_SUSPEND).length >= 3, { what: 'three calls at the daemon' });
    daemon.killConnections();
    for (const result of await Promise.allSettled(pending)) {
      assert.equal(result.status, 'rejected');
      assert.ok(result.reason instanceof ConnectionClosedError);
      assert.equal(result.reason.code, 'LIBVIRT_ERR_CLOSED');
    }
    const [error] = await closed;
    assert.ok(error instanceof Error);
    assert.equal(client.closed, true);
    await assert.rejects(client.getHostname(), ConnectionClosedError);
  });

  it('abort rejects the caller with AbortError, drops the late reply, and leaves no listener', async (t) => {
    const { daemon, client } = await setup(t);
    const g = gate();
    daemon.handlers.set(RemoteProc.DOMAIN_RESUME, async () => { await g.wait; return {}; });
    daemon.handlers.set(RemoteProc.CONNECT_GET_HOSTNAME, () => ({ body: (w) => w.string('still-alive', 100) }));
    const ac = new AbortController();
    const call = client.domainResume(dom, { signal: ac.signal });
    assert.equal(getEventListeners(ac.signal, 'abort').length, 1);
    ac.abort(new Error('user gave up'));
    const err = await call.catch((e: unknown) => e);
    assert.ok(err instanceof AbortError);
    assert.equal(err.code, 'LIBVIRT_ERR_ABORTED');
    assert.equal((err.cause as Error).message, 'user gave up');
    assert.equal(getEventListeners(ac.signal, 'abort').length, 0);
    g.open(); // the reply now arrives for a serial nobody waits on
    assert.equal(await client.getHostname(), 'still-alive');
    assert.equal(client.closed, false);
    await assert.rejects(client.domainResume(dom, { signal: AbortSignal.abort() }), AbortError);
  });

  it('times out a call with TimeoutError', async (t) => {
    const { daemon, client } = await setup(t);
    daemon.handlers.set(RemoteProc.DOMAIN_RESET, () => 'none');
    const err = await client.domainReset(dom, { timeoutMs: 20 }).catch((e: unknown) => e);
    assert.ok(err instanceof TimeoutError);
    assert.equal(err.code, 'LIBVIRT_ERR_TIMEOUT');
  });

  it('answers the daemon PING with PONG', async (t) => {
    const { daemon } = await setup(t);
    const peer = daemon.peers[0];
    assert.ok(peer);
    peer.message(KEEPALIVE_PROGRAM, KeepaliveProc.PING);
    await eventually(() => daemon.received.some((r) => r.header.prog === KEEPALIVE_PROGRAM), { what: 'the PONG' });
    const pong = daemon.received.find((r) => r.header.prog === KEEPALIVE_PROGRAM);
    assert.deepEqual([pong?.header.proc, pong?.header.type, pong?.header.serial], [KeepaliveProc.PONG, MessageType.MESSAGE, 0]);
  });

  it('sends its own PINGs when idle and declares the connection dead after N missed', async (t) => {
    const { daemon, client } = await setup(t, { keepalive: { intervalMs: 15, count: 2 } });
    assert.equal(daemon.calls(RemoteProc.CONNECT_SUPPORTS_FEATURE).length, 1);
    const pings = (): number => daemon.received.filter((r) => r.header.prog === KEEPALIVE_PROGRAM && r.header.proc === KeepaliveProc.PING).length;
    await eventually(() => pings() >= 2, { what: 'two PINGs', detail: () => `got ${pings()}` });
    assert.equal(client.closed, false); // answered pings keep it alive
    daemon.answerPings = false;
    const [error] = await once(client, 'close');
    assert.ok(error instanceof TimeoutError);
    assert.match(error.message, /2 keepalive pings/);
  });

  it('does not ping when keepalive is off, yet still answers the daemon', async (t) => {
    const { daemon, client } = await setup(t, { keepalive: false });
    await sleep(40);
    assert.equal(daemon.received.filter((r) => r.header.prog === KEEPALIVE_PROGRAM).length, 0);
    assert.equal(client.closed, false);
  });

  it('does not ping a daemon that lacks the keepalive program', async (t) => {
    const daemon = new FakeDaemon();
    daemon.keepaliveSupported = false;
    await daemon.listen();
    t.after(() => daemon.close());
    const client = await LibvirtClient.connect({ socketPath: daemon.socketPath, keepalive: { intervalMs: 10, count: 1 } });
    t.after(() => client.destroy());
    await sleep(60);
    assert.equal(daemon.received.filter((r) => r.header.prog === KEEPALIVE_PROGRAM).length, 0);
    assert.equal(client.closed, false);
  });

  it('delivers events in socket order, decoded or not', async (t) => {
    const { daemon, client } = await setup(t);
    const seen: Array<DomainEvent | string> = [];
    client.on('event', (e) => seen.push(e));
    client.on('unknown-event', (m) => seen.push(`unknown ${m.header.proc}`));
    const peer = daemon.peers[0];
    assert.ok(peer);
    const lifecycle = (event: number, detail: number) => (w: Parameters<NonNullable<Parameters<typeof peer.message>[2]>>[0]) => {
      w.int(1);
      writeDomainRef(w, dom);
      w.int(event).int(detail);
    };
    peer.message(REMOTE_PROGRAM, RemoteProc.DOMAIN_EVENT_CALLBACK_LIFECYCLE, lifecycle(2, 0));
    peer.message(REMOTE_PROGRAM, 320, (w) => { w.int(1); writeDomainRef(w, dom); w.hyper(5n); }); // RTC change
    peer.message(REMOTE_PROGRAM, RemoteProc.DOMAIN_EVENT_CALLBACK_LIFECYCLE, lifecycle(3, 0));
    peer.message(REMOTE_PROGRAM, RemoteProc.DOMAIN_EVENT_CALLBACK_LIFECYCLE, lifecycle(5, 1));
    await eventually(() => seen.length >= 4, { what: 'four events' });
    assert.deepEqual(seen.map((e) => (typeof e === 'string' ? e : e.kind === 'LIFECYCLE' ? `${e.event}/${e.detail}` : e.kind)),
      ['STARTED/BOOTED', 'unknown 320', 'SUSPENDED/PAUSED', 'STOPPED/DESTROYED']);
  });

  it('destroys the connection with ProtocolError on a malformed event', async (t) => {
    const { daemon, client } = await setup(t);
    daemon.peers[0]?.message(REMOTE_PROGRAM, RemoteProc.DOMAIN_EVENT_CALLBACK_LIFECYCLE, (w) => w.int(1));
    const [error] = await once(client, 'close');
    assert.ok(error instanceof ProtocolError);
  });

  it('registers and deregisters event callbacks by event id name', async (t) => {
    const { daemon, client } = await setup(t);
    daemon.handlers.set(RemoteProc.CONNECT_DOMAIN_EVENT_CALLBACK_REGISTER_ANY, () => ({ body: (w) => w.int(11) }));
    daemon.handlers.set(RemoteProc.CONNECT_DOMAIN_EVENT_CALLBACK_DEREGISTER_ANY, () => ({}));
    assert.equal(await client.registerDomainEvent('AGENT_LIFECYCLE'), 11);
    await client.deregisterDomainEvent(11);
    const reg = new XdrReader(daemon.calls(RemoteProc.CONNECT_DOMAIN_EVENT_CALLBACK_REGISTER_ANY)[0]?.body ?? Buffer.alloc(0));
    assert.deepEqual([reg.int(), reg.bool()], [18, false]); // VIR_DOMAIN_EVENT_ID_AGENT_LIFECYCLE, all domains
    assert.equal(new XdrReader(daemon.calls(RemoteProc.CONNECT_DOMAIN_EVENT_CALLBACK_DEREGISTER_ANY)[0]?.body ?? Buffer.alloc(0)).int(), 11);
  });
});

describe('LibvirtClient lifecycle', () => {
  it('close() is graceful and idempotent: pending calls finish, CONNECT_CLOSE is sent, close fires once', async (t) => {
    const { daemon, client } = await setup(t);
    const g = gate();
    daemon.handlers.set(RemoteProc.DOMAIN_SUSPEND, async () => { await g.wait; return {}; });
    const closes: Array<Error | undefined> = [];
    client.on('close', (e) => closes.push(e));
    const pending = client.domainSuspend(dom);
    await eventually(() => daemon.calls(RemoteProc.DOMAIN_SUSPEND).length >= 1, { what: 'the call at the daemon' });
    const c1 = client.close();
    const c2 = client.close();
    assert.equal(c1, c2);
    await assert.rejects(client.getHostname(), ConnectionClosedError); // no new calls once closing
    setTimeout(g.open, 10);
    await pending;
    await c1;
    await client.destroy(); // after close: a no-op
    assert.equal(daemon.calls(RemoteProc.CONNECT_CLOSE).length, 1);
    assert.deepEqual(closes, [undefined]);
  });

  it('destroy(err) is forceful and idempotent; pending calls carry err as cause', async (t) => {
    const { daemon, client } = await setup(t);
    daemon.handlers.set(RemoteProc.DOMAIN_SUSPEND, () => 'none');
    const pending = client.domainSuspend(dom);
    const boom = new Error('shutting down');
    await Promise.all([client.destroy(boom), client.destroy()]);
    const err = await pending.catch((e: unknown) => e);
    assert.ok(err instanceof ConnectionClosedError);
    assert.equal(err.cause, boom);
  });

  it('fails to connect with a typed error when nothing listens', async () => {
    const err = await LibvirtClient.connect({ socketPath: '/nonexistent/podvirt/libvirt-sock' }).catch((e: unknown) => e);
    assert.ok(err instanceof ConnectionClosedError);
    assert.equal((err.cause as NodeJS.ErrnoException).code, 'ENOENT');
  });
});
