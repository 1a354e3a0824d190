// The cmd service end to end over a real unix socket, with the leak-checking fake libvirt:
// lifecycle calls, WatchDomain, agent calls, status codes and deadlines.
import assert from 'node:assert/strict';
import { stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { test } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import type { cmd } from '@podvirt/proto';
import { eventually } from '@podvirt/test-support';
import { describe, harness, vmiRequest, watchUntil } from './harness.js';

function code(err: unknown): number | undefined {
  return (err as grpc.ServiceError).code;
}

test('ready socket is private, Info negotiates, Ping answers', async (t) => {
  const h = await harness(t);
  assert.match(h.server.socketPath, /sockets\/launcher-sock$/);
  assert.equal((await stat(h.server.socketPath)).mode & 0o777, 0o600);
  assert.equal((await stat(dirname(h.server.socketPath))).mode & 0o777, 0o700);
  const info = await h.cmd.info({ clientVersions: [1, 2] });
  assert.deepEqual([info.supportedVersions, info.negotiatedVersion, info.libvirtVersion], [[1], 1, '9.0.0']);
  assert.equal((await h.cmd.info({ clientVersions: [7] })).negotiatedVersion, 0);
  await h.cmd.ping({});
});

test('sync defines and starts; WatchDomain shows no domain, then Running; pause and unpause', async (t) => {
  const h = await harness(t);
  assert.deepEqual((await watchUntil(h.client, () => true)).map(describe), ['none']);
  assert.equal((await h.cmd.getDomain({})).domain, undefined);
  const { domain } = await h.cmd.sync(vmiRequest(h.vmi));
  assert.equal(`${domain?.state}/${domain?.reason}`, 'Running/Booted');
  assert.equal(domain?.name, 'mynamespace_testvmi');
  assert.equal(domain?.machine, 'pc-q35-7.2');
  assert.deepEqual(h.fake().calls.filter((c) => c === 'define' || c === 'create'), ['define', 'create']);
  await h.cmd.sync(vmiRequest(h.vmi));
  assert.deepEqual(h.fake().calls.filter((c) => c === 'define' || c === 'create'), ['define', 'create'], 'sync is idempotent');

  const paused = watchUntil(h.client, (evs) => evs.some((e) => e.event?.$case === 'domain' && e.event.value.pausedByUser));
  await eventually(() => h.hub.size >= 1, { what: 'a watcher subscribed' });
  await h.cmd.pause(vmiRequest(h.vmi));
  const last = (await paused).at(-1);
  assert.equal(last?.event?.$case === 'domain' && `${last.event.value.state}/${last.event.value.reason}`, 'Paused/User');
  await h.cmd.pause(vmiRequest(h.vmi));
  await h.cmd.sync(vmiRequest(h.vmi));
  assert.equal(h.fake().status?.state, 'PAUSED', 'sync leaves a user pause alone');
  await h.cmd.unpause(vmiRequest(h.vmi));
  const d = (await h.cmd.getDomain({})).domain;
  assert.equal(`${d?.state}/${d?.reason}/${d?.pausedByUser}`, 'Running/Unpaused/false');
});

test('status codes: invalid VMI names the field, wrong state, missing domain, no agent, deadline', async (t) => {
  const h = await harness(t);
  const bad = { ...h.vmi, spec: { ...h.vmi.spec, domain: { ...h.vmi.spec.domain, devices: { gpus: [{ name: 'g' }] } } } };
  await assert.rejects(h.cmd.sync(vmiRequest(bad)), (e) => code(e) === grpc.status.INVALID_ARGUMENT && /spec\.domain\.devices\.gpus\[0\]/.test((e as grpc.ServiceError).details));
  await assert.rejects(h.cmd.sync({ vmiJson: Buffer.from('{') }), (e) => code(e) === grpc.status.INVALID_ARGUMENT);
  // 200,000 levels: refused by name before anything recursive walks it (was INTERNAL, a stack overflow).
  const deep = Buffer.from(`${'['.repeat(200_000)}${']'.repeat(200_000)}`);
  await assert.rejects(h.cmd.sync({ vmiJson: deep }), (e) => code(e) === grpc.status.INVALID_ARGUMENT && /^invalid VirtualMachineInstance: \[0\]\[0\]\[0\]\[0\]\[0\]\[0\]…: Invalid value: nests more than 100 levels deep/.test((e as grpc.ServiceError).details));
  const other = { ...h.vmi, metadata: { ...h.vmi.metadata, uid: 'someone-else' } };
  await assert.rejects(h.cmd.pause(vmiRequest(other)), (e) => code(e) === grpc.status.INVALID_ARGUMENT && /metadata\.uid/.test((e as grpc.ServiceError).details));
  await assert.rejects(h.cmd.pause(vmiRequest(h.vmi)), (e) => code(e) === grpc.status.NOT_FOUND);
  await h.cmd.kill(vmiRequest(h.vmi));
  await h.cmd.delete(vmiRequest(h.vmi));
  await h.cmd.sync(vmiRequest(h.vmi));
  await assert.rejects(h.cmd.freeze({ vmiJson: vmiRequest(h.vmi).vmiJson, unfreezeTimeoutSeconds: 0 }), (e) => code(e) === grpc.status.FAILED_PRECONDITION);
  await assert.rejects(h.cmd.getGuestInfo({}), (e) => code(e) === grpc.status.FAILED_PRECONDITION);
  let release!: () => void;
  h.fake().holds.set('reset', new Promise<void>((r) => (release = r)));
  // The held call ends at the client's deadline, not when the fake lets it go.
  await assert.rejects(h.cmd.reset(vmiRequest(h.vmi), { timeoutMs: 300 }), (e) => code(e) === grpc.status.DEADLINE_EXCEEDED);
  release();
  h.fake().failures.set('suspend', new (await import('../src/errors.js')).LauncherError('LAUNCHER_ERR_DAEMON', 'daemon restarting'));
  await assert.rejects(h.cmd.pause(vmiRequest(h.vmi)), (e) => code(e) === grpc.status.UNAVAILABLE);
  // The server keeps serving after every failure above.
  await h.cmd.ping({});
});

test('agent: connected state, guest info, filesystems, users, ping, freeze with auto-thaw', async (t) => {
  const h = await harness(t);
  await h.cmd.sync(vmiRequest(h.vmi));
  const connected = watchUntil(h.client, (evs) => evs.some((e) => e.event?.$case === 'domain' && e.event.value.osInfo?.id === 'podvirt'));
  await eventually(() => h.hub.size >= 1, { what: 'a watcher subscribed' });
  h.fake().connectAgent(true);
  const snap = (await connected).at(-1);
  assert.ok(snap?.event?.$case === 'domain' && snap.event.value.agentConnected);
  const info = await h.cmd.getGuestInfo({});
  assert.equal(info.guestAgentVersion, '7.2.22');
  assert.equal(info.hostname, 'guest');
  assert.deepEqual((await h.cmd.getFilesystems({})).filesystems.map((f) => [f.mountPoint, f.fileSystemType, f.disks]), [['/mnt', 'ext4', ['vda']]]);
  assert.deepEqual((await h.cmd.getUsers({})).users, []);
  await h.cmd.guestPing({ timeoutSeconds: 1 });
  const stats = await h.cmd.getDomainStats({});
  assert.equal(stats.values['balloon.current'], 131072);

  const req = { vmiJson: vmiRequest(h.vmi).vmiJson, unfreezeTimeoutSeconds: 0 };
  await h.cmd.freeze(req);
  assert.equal(h.fake().frozen, true);
  assert.equal((await h.cmd.getDomain({})).domain?.fsFreezeStatus, 'frozen');
  await h.cmd.freeze(req);
  await h.cmd.unfreeze(vmiRequest(h.vmi));
  assert.equal(h.fake().frozen, false);
  await h.cmd.unfreeze(vmiRequest(h.vmi));
  await h.cmd.freeze({ ...req, unfreezeTimeoutSeconds: 1 });
  assert.equal(h.fake().frozen, true);
  // Nothing else thaws: the unfreeze timeout does, within a deadline well past its 1 s.
  await eventually(() => !h.fake().frozen, { deadlineMs: 5_000, what: 'thawed by the unfreeze timeout' });
  assert.equal((await h.cmd.getDomain({})).domain?.fsFreezeStatus, '');

  await h.cmd.softReboot(vmiRequest(h.vmi));
  assert.ok(h.fake().calls.includes('rebootAgent'));
  h.fake().connectAgent(false);
  await h.cmd.softReboot(vmiRequest(h.vmi));
  assert.ok(h.fake().calls.includes('rebootAcpi'), 'ACPI without an agent');
});

test('a slow watcher does not block others; notices reach watchers', async (t) => {
  const h = await harness(t);
  await h.cmd.sync(vmiRequest(h.vmi));
  const writes: cmd.WatchDomainEvent[] = [];
  const remove = h.hub.subscribe({ write: (e) => { writes.push(e); return false; }, onDrain: () => {}, end: () => {} });
  t.after(remove);
  const fast = watchUntil(h.client, (evs) => evs.some((e) => e.event?.$case === 'notice'));
  await eventually(() => h.hub.size >= 2, { what: 'both watchers subscribed' });
  for (let i = 0; i < 50; i++) h.fake().setState(i % 2 ? 'RUNNING' : 'PAUSED', i % 2 ? 'UNPAUSED' : 'USER', ['RESUMED', 'UNPAUSED']);
  h.fake().setState('RUNNING', 'BOOTED', ['CRASHED', 'PANICKED']);
  const evs = await fast;
  assert.equal(evs.at(-1)?.event?.$case, 'notice');
  assert.equal(writes.length, 1, 'the blocked watcher holds at most its first write');
});

test('freeze and unfreeze check the VMI identity; the unfreeze timeout is bounded; listings refuse while frozen', async (t) => {
  const h = await harness(t);
  await h.cmd.sync(vmiRequest(h.vmi));
  const connected = watchUntil(h.client, (evs) => evs.some((e) => e.event?.$case === 'domain' && e.event.value.agentConnected));
  await eventually(() => h.hub.size >= 1, { what: 'a watcher subscribed' });
  h.fake().connectAgent(true);
  await connected;
  const invalid = (field: RegExp) => (e: unknown) => code(e) === grpc.status.INVALID_ARGUMENT && field.test((e as grpc.ServiceError).details);
  await assert.rejects(h.cmd.freeze({ vmiJson: Buffer.from('{}'), unfreezeTimeoutSeconds: 0 }), invalid(/metadata\.namespace/));
  const other = { ...h.vmi, metadata: { ...h.vmi.metadata, uid: 'someone-else' } };
  await assert.rejects(h.cmd.freeze({ vmiJson: vmiRequest(other).vmiJson, unfreezeTimeoutSeconds: 0 }), invalid(/metadata\.uid/));
  assert.equal(h.fake().frozen, false, 'a foreign VMI froze nothing');
  for (const seconds of [-1, 2_147_484, 2_147_483_647]) {
    await assert.rejects(h.cmd.freeze({ vmiJson: vmiRequest(h.vmi).vmiJson, unfreezeTimeoutSeconds: seconds }), invalid(/unfreeze_timeout_seconds .* to 2147483 .*got/));
  }
  assert.equal(h.fake().frozen, false);
  await h.cmd.freeze({ vmiJson: vmiRequest(h.vmi).vmiJson, unfreezeTimeoutSeconds: 2_147_483 });
  assert.equal(h.fake().frozen, true);
  const frozen = (e: unknown) => code(e) === grpc.status.FAILED_PRECONDITION && /frozen/.test((e as grpc.ServiceError).details);
  await assert.rejects(h.cmd.getFilesystems({}), frozen);
  await assert.rejects(h.cmd.getUsers({}), frozen);
  await assert.rejects(h.cmd.unfreeze({ vmiJson: Buffer.from('{}') }), invalid(/metadata\.namespace/));
  assert.equal(h.fake().frozen, true, 'a foreign VMI thawed nothing');
  await h.cmd.unfreeze(vmiRequest(h.vmi));
  assert.equal(h.fake().frozen, false);
  assert.equal((await h.cmd.getFilesystems({})).filesystems.length, 1);
});

test('Sync decodes and defaults: a watchdog given only a name becomes an i6300esb that resets', async (t) => {
  const h = await harness(t);
  const vmi = { ...h.vmi, spec: { ...h.vmi.spec, domain: { ...h.vmi.spec.domain, devices: { ...h.vmi.spec.domain.devices, watchdog: { name: 'w' } } } } };
  await h.cmd.sync(vmiRequest(vmi));
  assert.match(h.fake().xml ?? '', /<watchdog model="i6300esb" action="reset">\s*<alias name="ua-w"\/>/);
});
