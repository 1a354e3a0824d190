// The node API's Console and Vnc streams against a fake guest socket at the place the launcher
// puts it (the pod's private emptyDir): bytes both ways, one client at a time (refusal or
// takeover), the refusals node.proto documents, a client that stops reading, the guest's side
// closing, the handler shutting down, and no socket or session left behind.
import assert from 'node:assert/strict';
import { closeSync, constants, openSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import type { node } from '@podvirt/proto';
import { guestSocketPath } from '../src/guest-stream/guest-socket.js';
import { eventually } from '@podvirt/test-support';
import { makeVmi } from './fixtures.js';
import { nodeApiHarness, type NodeApiHarness } from './node-api-harness.js';

const REF = { namespace: 'default', name: 'vm1' };

/** A guest's serial port: echoes what it is sent, and lets the test write and close. */
interface FakeGuest {
  readonly sockets: Set<Socket>;
  readonly received: Buffer[];
  readonly accepted: number;
}

async function fakeGuestSocket(t: TestContext, h: NodeApiHarness, kind: 'console' | 'vnc' = 'console'): Promise<FakeGuest> {
  const launcherSock = join(h.dir, 'p1', 'volumes', 'kubernetes.io~empty-dir', 'sockets', 'launcher-sock');
  const path = guestSocketPath(launcherSock, 'uid-1', kind);
  await mkdir(join(path, '..'), { recursive: true });
  // The path is longer than a socket address may be: bind through a descriptor of its directory.
  const dirFd = openSync(join(path, '..'), constants.O_RDONLY | constants.O_DIRECTORY);
  const guest = { sockets: new Set<Socket>(), received: [] as Buffer[], accepted: 0 };
  const server: Server = createServer((socket) => {
    guest.accepted += 1;
    guest.sockets.add(socket);
    socket.on('data', (chunk: Buffer) => {
      guest.received.push(chunk);
      socket.write(Buffer.from(chunk.toString('latin1').toUpperCase(), 'latin1'));
    });
    socket.on('error', () => undefined);
    socket.once('close', () => guest.sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(`/proc/self/fd/${dirFd}/${path.split('/').pop() ?? ''}`, resolve));
  closeSync(dirFd);
  t.after(() => {
    for (const s of guest.sockets) s.destroy();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return guest;
}

interface Attached {
  readonly call: grpc.ClientDuplexStream<node.StreamInput, node.StreamOutput>;
  readonly output: Buffer[];
  readonly attached: Promise<string>;
  readonly status: Promise<grpc.StatusObject>;
}

function open(h: NodeApiHarness, o: { kind?: 'console' | 'vnc'; ref?: node.VmiRef; takeover?: boolean } = {}): Attached {
  const call = (o.kind ?? 'console') === 'console' ? h.client.console() : h.client.vnc();
  const output: Buffer[] = [];
  let onAttached!: (uid: string) => void;
  const attached = new Promise<string>((resolve) => (onAttached = resolve));
  call.on('data', (msg: node.StreamOutput) => {
    if (msg.output?.$case === 'attached') onAttached(msg.output.value.uid);
    if (msg.output?.$case === 'data') output.push(msg.output.value);
  });
  call.on('error', () => undefined);
  const status = new Promise<grpc.StatusObject>((resolve) => call.on('status', resolve));
  call.write({ input: { $case: 'open', value: { vmi: o.ref ?? REF, takeover: o.takeover ?? false } } });
  return { call, output, attached, status };
}

const send = (a: Attached, text: string): boolean => a.call.write({ input: { $case: 'data', value: Buffer.from(text) } });
const text = (chunks: Buffer[]): string => Buffer.concat(chunks).toString('latin1');

async function runningHarness(t: TestContext): Promise<NodeApiHarness> {
  const h = await nodeApiHarness(t);
  await eventually(() => h.vmi().status?.phase === 'Running');
  return h;
}

test('console: attached first, then bytes both ways; a half-close detaches with OK and releases the socket', async (t) => {
  const h = await runningHarness(t);
  const guest = await fakeGuestSocket(t, h);
  const a = open(h);
  assert.equal(await a.attached, 'uid-1');
  send(a, 'cat /proc/uptime\r');
  await eventually(() => text(a.output) === 'CAT /PROC/UPTIME\r');
  assert.equal(text(guest.received), 'cat /proc/uptime\r');
  a.call.end();
  assert.equal((await a.status).code, grpc.status.OK);
  await eventually(() => guest.sockets.size === 0 && h.streams.sessions.size === 0);
  assert.deepEqual(h.calls, ['Console OK']);
});

test('one client at a time: a second is refused with FAILED_PRECONDITION; --takeover ends the first with ABORTED', async (t) => {
  const h = await runningHarness(t);
  const guest = await fakeGuestSocket(t, h);
  const first = open(h);
  await first.attached;
  const second = open(h);
  const refused = await second.status;
  assert.equal(refused.code, grpc.status.FAILED_PRECONDITION);
  assert.match(refused.details, /another client is attached to the console of VMI default\/vm1; .*--takeover/);

  const third = open(h, { takeover: true });
  await third.attached;
  const taken = await first.status;
  assert.equal(taken.code, grpc.status.ABORTED);
  assert.match(taken.details, /another client took over the console of VMI default\/vm1/);
  send(third, 'ok');
  await eventually(() => text(third.output) === 'OK');
  assert.equal(guest.sockets.size, 1, 'the first client\'s socket was closed');
  third.call.end();
  await third.status;
  await eventually(() => guest.sockets.size === 0 && h.streams.sessions.size === 0);
});

test('console and vnc are separate slots of the same VMI', async (t) => {
  const h = await runningHarness(t);
  await fakeGuestSocket(t, h, 'console');
  const vnc = await fakeGuestSocket(t, h, 'vnc');
  const c = open(h);
  const v = open(h, { kind: 'vnc' });
  await Promise.all([c.attached, v.attached]);
  send(v, 'rfb');
  await eventually(() => text(v.output) === 'RFB');
  assert.equal(text(vnc.received), 'rfb');
  c.call.end();
  v.call.end();
  await Promise.all([c.status, v.status]);
});

test('refusals: no such VMI → NOT_FOUND; not running, no serial console, or another node → FAILED_PRECONDITION; no open → INVALID_ARGUMENT', async (t) => {
  const h = await nodeApiHarness(t, { phase: 'Scheduled' });
  const missing = await open(h, { ref: { namespace: 'default', name: 'nope' } }).status;
  assert.equal(missing.code, grpc.status.NOT_FOUND);
  assert.match(missing.details, /VMI default\/nope not found/);

  h.kube.create(makeVmi({ name: 'done', uid: 'uid-done', phase: 'Succeeded', podUid: 'p9' }));
  const done = await open(h, { ref: { namespace: 'default', name: 'done' } }).status;
  assert.equal(done.code, grpc.status.FAILED_PRECONDITION);
  assert.match(done.details, /VMI default\/done is not running/);
  await eventually(() => h.vmi().status?.phase === 'Running');
  h.kube.modify('default/vm1', (vmi) => {
    vmi.spec.domain.devices.autoattachSerialConsole = false;
  });
  await eventually(() => h.vmi().spec.domain.devices.autoattachSerialConsole === false);
  await eventually(async () => (await open(h).status).code === grpc.status.FAILED_PRECONDITION);
  assert.match((await open(h).status).details, /has no serial console: spec.domain.devices.autoattachSerialConsole is false/);

  h.kube.create({ ...h.vmi(), metadata: { ...h.vmi().metadata, name: 'far', uid: 'uid-far', labels: {} }, status: { phase: 'Running', nodeName: 'node02' } });
  const elsewhere = await open(h, { ref: { namespace: 'default', name: 'far' } }).status;
  assert.equal(elsewhere.code, grpc.status.FAILED_PRECONDITION);
  assert.match(elsewhere.details, /runs on node node02/);

  const call = h.client.console();
  call.on('error', () => undefined);
  const st = new Promise<grpc.StatusObject>((resolve) => call.on('status', resolve));
  call.write({ input: { $case: 'data', value: Buffer.from('x') } });
  assert.equal((await st).code, grpc.status.INVALID_ARGUMENT);
  assert.equal(h.streams.sessions.size, 0);
});

test('a client that stops reading is disconnected with RESOURCE_EXHAUSTED; the guest side is never held up', async (t) => {
  const h = await runningHarness(t);
  const guest = await fakeGuestSocket(t, h);
  const a = open(h);
  await a.attached;
  a.call.pause();
  const [socket] = guest.sockets;
  assert.ok(socket !== undefined);
  // The guest floods; each write must be taken at once (the handler keeps reading).
  const chunk = Buffer.alloc(64 * 1024, 0x41);
  let written = 0;
  while (guest.sockets.size > 0 && written < 64 * 1024 * 1024) {
    socket.write(chunk);
    written += chunk.length;
    await new Promise((resolve) => setImmediate(resolve));
  }
  assert.equal(guest.sockets.size, 0, 'the handler closed the guest socket instead of letting it back up');
  a.call.resume();
  const st = await a.status;
  assert.equal(st.code, grpc.status.RESOURCE_EXHAUSTED);
  assert.match(st.details, /the client read too slowly/);
  await eventually(() => h.streams.sessions.size === 0);
});

test('the guest side closing (the VM stopped) ends the stream with OK; handler shutdown ends it with UNAVAILABLE', async (t) => {
  const h = await runningHarness(t);
  const guest = await fakeGuestSocket(t, h);
  const a = open(h);
  await a.attached;
  for (const s of guest.sockets) s.destroy();
  assert.equal((await a.status).code, grpc.status.OK);

  const b = open(h);
  await b.attached;
  h.streams.close();
  const st = await b.status;
  assert.equal(st.code, grpc.status.UNAVAILABLE);
  assert.match(st.details, /the handler is shutting down; the VM keeps running/);
  await eventually(() => guest.sockets.size === 0);
  assert.equal((await open(h).status).code, grpc.status.UNAVAILABLE, 'no new attach during shutdown');
});

test('50 attach/detach cycles, some abrupt: no session or guest socket left', async (t) => {
  const h = await runningHarness(t);
  const guest = await fakeGuestSocket(t, h);
  for (let i = 0; i < 50; i++) {
    const a = open(h);
    await a.attached;
    send(a, `x${i}`);
    await eventually(() => text(a.output) === `X${i}`);
    if (i % 2 === 0) a.call.end();
    else a.call.cancel();
    await a.status;
    await eventually(() => guest.sockets.size === 0 && h.streams.sessions.size === 0);
  }
  assert.equal(guest.accepted, 50);
});
