// The node API against a fake launcher: each operation reaches the launcher, records
// KubeVirt's Event, and shows in the VMI status through the normal reconcile; refusals carry
// the status codes node.proto documents and say why.
import assert from 'node:assert/strict';
import { stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { test } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { status } from '@grpc/grpc-js';
import { NODE_NAME_LABEL } from '@podvirt/api';
import { eventually } from '@podvirt/test-support';
import { makeVmi } from './fixtures.js';
import { grpcFailure, KEY, nodeApiHarness, type NodeApiHarness } from './node-api-harness.js';

const REF = { namespace: 'default', name: 'vm1' };

async function running(h: NodeApiHarness, agent = true): Promise<void> {
  await eventually(() => h.vmi().status?.phase === 'Running');
  h.launcher.setDomain({ agentConnected: agent });
  await eventually(() => (h.vmi().status?.conditions?.some((c) => c.type === 'AgentConnected') ?? false) === agent);
}

const paused = (h: NodeApiHarness) => h.vmi().status?.conditions?.find((c) => c.type === 'Paused');

test('the socket is root-only: directory 0700, socket 0600, removed on close', async (t) => {
  const h = await nodeApiHarness(t);
  assert.equal((await stat(dirname(h.server.socketPath))).mode & 0o777, 0o700);
  assert.equal((await stat(h.server.socketPath)).mode & 0o777, 0o600);
  await h.server.close();
  await assert.rejects(stat(h.server.socketPath), { code: 'ENOENT' });
});

test('pause → condition Paused (PausedByUser) and Event Paused; pausing again is refused; unpause clears it', async (t) => {
  const h = await nodeApiHarness(t);
  await running(h);
  const res = await h.node.pause(REF);
  assert.equal(res.uid, h.vmi().metadata.uid);
  await eventually(() => paused(h)?.reason === 'PausedByUser');
  assert.ok(h.events.reasons().includes('Paused'));
  assert.equal(h.vmi().status?.phase, 'Running', 'a paused VMI stays Running');
  await assert.rejects(h.node.pause(REF), grpcFailure(status.FAILED_PRECONDITION, /VMI default\/vm1 is already paused/));
  await assert.rejects(h.node.softReboot(REF), grpcFailure(status.FAILED_PRECONDITION, /is paused/));

  await h.node.unpause(REF);
  await eventually(() => paused(h) === undefined);
  assert.ok(h.events.reasons().includes('Unpaused'));
  await assert.rejects(h.node.unpause(REF), grpcFailure(status.FAILED_PRECONDITION, /is not paused/));
  assert.deepEqual(h.calls.slice(0, 3), ['Pause OK', 'Pause FAILED_PRECONDITION', 'SoftReboot FAILED_PRECONDITION']);
});

test('freeze → fsFreezeStatus frozen; unfreeze thaws; an unfreeze timeout thaws by itself', async (t) => {
  const h = await nodeApiHarness(t);
  await running(h);
  await h.node.freeze({ vmi: REF, unfreezeTimeoutSeconds: 0 });
  await eventually(() => h.vmi().status?.fsFreezeStatus === 'frozen');
  await h.node.unfreeze(REF);
  await eventually(() => h.vmi().status?.fsFreezeStatus === undefined);

  await h.node.freeze({ vmi: REF, unfreezeTimeoutSeconds: 1 });
  await eventually(() => h.vmi().status?.fsFreezeStatus === 'frozen');
  await eventually(() => h.vmi().status?.fsFreezeStatus === undefined, { deadlineMs: 3_000 });
  await assert.rejects(h.node.freeze({ vmi: REF, unfreezeTimeoutSeconds: -1 }), grpcFailure(status.INVALID_ARGUMENT, /unfreeze_timeout_seconds/));
  await assert.rejects(h.node.freeze({ unfreezeTimeoutSeconds: 0 }), grpcFailure(status.INVALID_ARGUMENT, /^vmi\.namespace is required$/));
  assert.ok(!h.events.reasons().includes('!FreezeError'));
});

test('a failed freeze is a FreezeError Warning and the launcher\'s status reaches the caller', async (t) => {
  const h = await nodeApiHarness(t);
  await running(h, false);
  await assert.rejects(h.node.freeze({ vmi: REF, unfreezeTimeoutSeconds: 0 }), grpcFailure(status.FAILED_PRECONDITION, /Freeze: no guest agent connected/));
  await eventually(() => h.events.reasons().includes('!FreezeError'));
  const event = h.events.events.find((e) => e.reason === 'FreezeError');
  assert.match(event?.message ?? '', /no guest agent/);
});

test('soft reboot and reset record SoftRebooted and Reset; soft reboot needs an agent or ACPI', async (t) => {
  const h = await nodeApiHarness(t);
  await running(h, false);
  await h.node.softReboot(REF);
  await h.node.reset(REF);
  assert.deepEqual(h.launcher.calls.filter((c) => c === 'SoftReboot' || c === 'Reset'), ['SoftReboot', 'Reset']);
  await eventually(() => h.events.reasons().includes('SoftRebooted') && h.events.reasons().includes('Reset'));

  const noAcpi = await nodeApiHarness(t, { acpi: false });
  await running(noAcpi, false);
  await assert.rejects(noAcpi.node.softReboot(REF), grpcFailure(status.FAILED_PRECONDITION, /neither a guest agent connected nor ACPI enabled/));
  await running(noAcpi, true);
  await noAcpi.node.softReboot(REF);
});

test('operations on a VMI that is not running yet are refused', async (t) => {
  const h = await nodeApiHarness(t, { phase: 'Scheduled' });
  h.launcher.hang();
  await assert.rejects(h.node.pause(REF), grpcFailure(status.FAILED_PRECONDITION, /VMI default\/vm1 is not running/));
  await assert.rejects(h.node.reset(REF), grpcFailure(status.FAILED_PRECONDITION, /is not running/));
  h.launcher.resume();
});

test('a missing VMI is NOT_FOUND; one on another node is FAILED_PRECONDITION naming that node', async (t) => {
  const h = await nodeApiHarness(t);
  await running(h);
  await assert.rejects(h.node.pause({ namespace: 'default', name: 'ghost' }), grpcFailure(status.NOT_FOUND, /^VMI default\/ghost not found$/));
  const elsewhere = makeVmi({ name: 'far', uid: 'uid-far' });
  elsewhere.metadata.labels = { [NODE_NAME_LABEL]: 'node02' };
  elsewhere.status = { ...elsewhere.status, nodeName: 'node02' };
  h.kube.create(elsewhere);
  await assert.rejects(h.node.pause({ namespace: 'default', name: 'far' }), grpcFailure(status.FAILED_PRECONDITION, /runs on node node02, not on node01/));
  await assert.rejects(h.node.guestOsInfo({ namespace: 'default', name: 'far' }), grpcFailure(status.FAILED_PRECONDITION, /node02/));
  await assert.rejects(h.node.pause({ namespace: 'default', name: '' }), grpcFailure(status.INVALID_ARGUMENT, /^request\.name is required$/));
  assert.equal(h.kube.current(KEY)?.status?.conditions?.some((c) => c.type === 'Paused'), false, 'nothing else disturbed');
});

test('guest info, users and filesystems need the agent; List shows this node\'s VMIs with their domains', async (t) => {
  const h = await nodeApiHarness(t);
  await running(h, false);
  await assert.rejects(h.node.userList(REF), grpcFailure(status.FAILED_PRECONDITION, /has no guest agent connected/));
  h.launcher.setDomain({ agentConnected: true });
  await eventually(() => h.vmi().status?.conditions?.some((c) => c.type === 'AgentConnected') === true);
  assert.equal((await h.node.guestOsInfo(REF)).hostname, 'fake-guest');
  assert.deepEqual((await h.node.userList(REF)).users.map((u) => u.userName), ['root']);
  assert.deepEqual((await h.node.filesystemList(REF)).filesystems.map((f) => f.mountPoint), ['/']);

  const list = await h.node.list({ namespace: '' });
  assert.deepEqual(list.vmis, [{
    namespace: 'default', name: 'vm1', uid: h.vmi().metadata.uid, phase: 'Running', nodeName: 'node01',
    domainState: 'Running', domainReason: 'Booted', paused: false, agentConnected: true, fsFreezeStatus: '',
  }]);
  assert.deepEqual((await h.node.list({ namespace: 'other' })).vmis, []);
});

test('a launcher that is gone makes the call fail (UNAVAILABLE, DEADLINE_EXCEEDED, or not running once seen gone), not hang', async (t) => {
  const h = await nodeApiHarness(t);
  await running(h);
  await h.launcher.close();
  const codes: number[] = [status.UNAVAILABLE, status.DEADLINE_EXCEEDED, status.FAILED_PRECONDITION];
  await assert.rejects(h.node.pause(REF), (err: { code: number }) => codes.includes(err.code));
});

test('back-to-back pause, unpause, pause: each call sees the previous one (read-your-writes)', async (t) => {
  const h = await nodeApiHarness(t);
  await running(h);
  for (let i = 0; i < 3; i++) {
    await h.node.pause(REF);
    await h.node.unpause(REF);
  }
  await h.node.freeze({ vmi: REF, unfreezeTimeoutSeconds: 0 });
  await h.node.unfreeze(REF);
  assert.deepEqual(h.calls.filter((c) => !c.endsWith(' OK')), []);
  await eventually(() => paused(h) === undefined && h.vmi().status?.fsFreezeStatus === undefined);
});

test('a domain change reported while a call answers is reconciled (the status write) once the answer is out', async (t) => {
  const h = await nodeApiHarness(t);
  await running(h);
  const uid = h.vmi().metadata.uid ?? '';
  const writes = h.kube.statusWrites;
  const release = h.controller.holdForAnswer(KEY);
  const second = h.controller.holdForAnswer(KEY);
  h.launcher.setDomain({ state: 'Paused', reason: 'User', pausedByUser: true });
  // The handler has the change (its cache, which the call's precondition checks read) ...
  await eventually(() => h.controller.registry.cache.get(uid)?.domain?.state === 'Paused', { what: 'the change seen' });
  await new Promise((r) => setImmediate(r));
  // ... but its status write waits for every answer in flight for the VMI.
  assert.equal(h.kube.statusWrites, writes, 'no status write while answering');
  release();
  release();
  await new Promise((r) => setImmediate(r));
  await new Promise((r) => setImmediate(r));
  assert.equal(h.kube.statusWrites, writes, 'one release of two holders writes nothing');
  second();
  await eventually(() => h.vmi().status?.conditions?.some((c) => c.type === 'Paused') === true, { what: 'the Paused condition written' });
  // A change with no call answering is reconciled at once, as before.
  h.launcher.setDomain({ state: 'Running', reason: 'Unpaused', pausedByUser: false });
  await eventually(() => h.vmi().status?.conditions?.some((c) => c.type === 'Paused') !== true, { what: 'the Paused condition gone' });
});

test('namespace and name are checked as Kubernetes does before use, and never echoed unbounded', async (t) => {
  const h = await nodeApiHarness(t);
  await running(h);
  const refused = (field: RegExp) => (err: unknown): boolean => {
    const e = err as { code: number; details: string };
    assert.equal(e.code, status.INVALID_ARGUMENT, e.details);
    assert.match(e.details, field);
    assert.ok(e.details.length < 400, `details of ${e.details.length} characters`);
    return true;
  };
  for (const name of ['.', '..', 'Vm1', 'a/b', 'vm1/../x', '-x', 'x'.repeat(254), 'y'.repeat(1_000_000)]) {
    await assert.rejects(h.node.pause({ namespace: 'default', name }), refused(/^request\.name .* is not a valid VMI name/));
  }
  for (const namespace of ['.', 'Default', 'a.b', 'n'.repeat(64), 'z'.repeat(100_000)]) {
    await assert.rejects(h.node.guestOsInfo({ namespace, name: 'vm1' }), refused(/^request\.namespace .* is not a valid namespace/));
    await assert.rejects(h.node.list({ namespace }), refused(/^namespace .* is not a valid namespace/));
  }
  await assert.rejects(h.node.freeze({ vmi: { namespace: 'default', name: '..' }, unfreezeTimeoutSeconds: 0 }), refused(/^vmi\.name/));
  assert.equal(h.kube.gets, 0, 'nothing reached the API server');
  assert.equal(h.vmi().status?.fsFreezeStatus, undefined);
});

test('an unfreeze timeout beyond Node\'s timer range is refused, not thawed at once', async (t) => {
  const h = await nodeApiHarness(t);
  await running(h);
  for (const seconds of [2_147_484, 2_147_483_647]) {
    await assert.rejects(h.node.freeze({ vmi: REF, unfreezeTimeoutSeconds: seconds }),
      grpcFailure(status.INVALID_ARGUMENT, /^unfreeze_timeout_seconds must be a whole number from 0 .* to 2147483 \(about 24 days\), got \d+$/));
  }
  assert.deepEqual(h.launcher.calls.filter((c) => c === 'Freeze'), []);
  await h.node.freeze({ vmi: REF, unfreezeTimeoutSeconds: 2_147_483 });
  await eventually(() => h.vmi().status?.fsFreezeStatus === 'frozen');
  await h.node.unfreeze(REF);
});

test('a request body that is not protobuf is INVALID_ARGUMENT naming the method, never INTERNAL', async (t) => {
  const h = await nodeApiHarness(t);
  const raw = new grpc.Client(`unix:${h.server.socketPath}`, grpc.credentials.createInsecure());
  t.after(() => raw.close());
  const send = (path: string, body: Buffer) => new Promise<grpc.ServiceError | undefined>((resolve) => {
    raw.makeUnaryRequest(path, (b: Buffer) => b, (b: Buffer) => b, body, new grpc.Metadata(), { deadline: Date.now() + 5_000 }, (err) => resolve(err ?? undefined));
  });
  for (const method of ['Pause', 'Freeze', 'List', 'FilesystemList']) {
    const err = await send(`/podvirt.node.v1.Node/${method}`, Buffer.from([0x0a, 0xff]));
    assert.equal(err?.code, status.INVALID_ARGUMENT, `${method}: ${err?.code} ${err?.details}`);
    assert.match(err?.details ?? '', new RegExp(`Node/${method}: the request is not a valid protobuf message`));
  }
  assert.deepEqual(h.launcher.calls.filter((c) => /pause|freeze|filesystem/i.test(c)), [], 'no operation reached the launcher');
});
