import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  CreateFlags, DomainStatsTypes, ErrorNumber, GuestInfoTypes, LibvirtError, ListDomainsFlags, ShutdownFlags,
  isAgentUnresponsive, isNotFound, isOperationInvalid, uuidToString,
} from '@podvirt/libvirt';
import type { DomainEventIdName, DomainRef, LibvirtClient } from '@podvirt/libvirt';
import { waitForConsoleText, guestImage } from '../testbed/index.js';
import { EventRecorder, guestXml, libvirtFixture } from './libvirt-fixture.js';

const EVENT_IDS: DomainEventIdName[] = [
  'LIFECYCLE', 'AGENT_LIFECYCLE', 'REBOOT', 'WATCHDOG', 'IO_ERROR_REASON', 'DEVICE_ADDED', 'DEVICE_REMOVED', 'JOB_COMPLETED',
];

/** The agent connects around the time the ready marker prints; retry while it is not there yet. */
async function agentPing(client: LibvirtClient, dom: DomainRef): Promise<string | null> {
  for (let i = 0; ; i++) {
    try {
      return await client.domainAgentCommand(dom, '{"execute":"guest-ping"}', { timeoutSeconds: 5 });
    } catch (err) {
      if (!isAgentUnresponsive(err) || i >= 40) throw err;
      await sleep(250);
    }
  }
}

void test('libvirt client drives the guest through its whole lifecycle under TCG', async (t) => {
  const { dir, client } = await libvirtFixture(t);
  const recorder = new EventRecorder(client);
  t.after(() => recorder.stop());
  const callbacks = await Promise.all(EVENT_IDS.map((id) => client.registerDomainEvent(id)));
  assert.equal(new Set(callbacks).size, EVENT_IDS.length);

  // Connection-level calls.
  assert.ok((await client.getLibVersion()) >= 9_000_000);
  assert.ok((await client.getVersion()) > 0);
  assert.ok((await client.getHostname()).length > 0);
  assert.match(await client.getCapabilities(), /<capabilities>/);

  // A missing domain is NO_DOMAIN.
  const missing = await client.domainLookupByName('podvirt-no-such-domain').catch((e: unknown) => e);
  assert.ok(missing instanceof LibvirtError && isNotFound(missing));
  assert.equal(missing.code, ErrorNumber.NO_DOMAIN);
  assert.equal(missing.codeName, 'NO_DOMAIN');

  // Define, look up, start.
  const { xml, serialLog } = await guestXml(dir, 'lv-life');
  const defined = await client.domainDefineXml(xml);
  assert.equal(defined.id, -1);
  assert.deepEqual(await client.domainLookupByUuid(uuidToString(defined.uuid)), defined);
  assert.deepEqual((await client.listAllDomains({ flags: ListDomainsFlags.INACTIVE })).map((d) => d.name), ['lv-life']);
  assert.equal((await client.domainGetState(defined)).state, 'SHUTOFF');
  const dom = await client.domainCreate(defined);
  assert.ok(dom.id > 0);
  await waitForConsoleText(serialLog, guestImage().readyMarker, { timeoutMs: 60_000 });
  assert.deepEqual(await client.domainGetState(dom), { state: 'RUNNING', reason: 'BOOTED', stateCode: 1, reasonCode: 1 });
  assert.match(await client.domainGetXmlDesc(dom), /<name>lv-life<\/name>/);

  // Inspection.
  const info = await client.domainGetInfo(dom);
  assert.equal(info.state, 'RUNNING');
  assert.equal(info.maxMemKiB, 128n * 1024n);
  assert.equal(info.nrVirtCpu, 1);
  assert.ok(info.cpuTimeNs > 0n);
  const mem = await client.domainMemoryStats(dom);
  assert.ok((mem.RSS ?? 0n) > 0n, `memory stats: ${JSON.stringify(mem, (_, v: unknown) => (typeof v === 'bigint' ? String(v) : v))}`);
  const [all] = await client.getAllDomainStats({ stats: DomainStatsTypes.STATE | DomainStatsTypes.CPU_TOTAL });
  assert.equal(all?.domain.name, 'lv-life');
  assert.equal(all?.params['state.state'], 1);
  assert.equal(typeof all?.params['cpu.time'], 'bigint');
  const listed = await client.getAllDomainStats({ domains: [dom], stats: DomainStatsTypes.STATE });
  assert.deepEqual(listed.map((r) => r.params['state.reason']), [1]);

  // 200 concurrent calls on one connection.
  const states = await Promise.all(Array.from({ length: 200 }, () => client.domainGetState(dom)));
  assert.ok(states.every((s) => s.state === 'RUNNING'));

  // Suspend and resume; resuming a running domain is OPERATION_INVALID.
  await client.domainSuspend(dom);
  assert.equal(`${(await client.domainGetState(dom)).state}/${(await client.domainGetState(dom)).reason}`, 'PAUSED/USER');
  await client.domainResume(dom);
  assert.equal((await client.domainGetState(dom)).reason, 'UNPAUSED');
  assert.ok(isOperationInvalid(await client.domainResume(dom).catch((e: unknown) => e)));

  // Guest agent: ping, guest info, filesystems, freeze/thaw, time.
  assert.equal(await agentPing(client, dom), '{"return":{}}');
  await recorder.waitFor((e) => e.kind === 'AGENT_LIFECYCLE' && e.state === 'CONNECTED', 'agent connected');
  const guest = await client.domainGetGuestInfo(dom, { types: GuestInfoTypes.OS | GuestInfoTypes.FILESYSTEM | GuestInfoTypes.HOSTNAME });
  assert.equal(typeof guest['os.kernel-release'], 'string');
  assert.ok(Number(guest['fs.count']) >= 1);
  const fsinfo = await client.domainGetFsInfo(dom);
  const mnt = fsinfo.find((f) => f.mountpoint === '/mnt');
  assert.equal(mnt?.fstype, 'ext4');
  // All filesystems: only /mnt counts (the initramfs root cannot freeze). Naming mountpoints
  // needs guest-fsfreeze-freeze-list, which libvirt may not have probed for yet right after boot.
  assert.equal(await client.domainFsFreeze(dom), 1);
  const status = await client.domainAgentCommand(dom, '{"execute":"guest-fsfreeze-status"}');
  assert.equal(JSON.parse(status ?? 'null').return, 'frozen');
  assert.equal(await client.domainFsThaw(dom), 1);
  const guestTime = await client.domainGetTime(dom);
  assert.ok(Math.abs(Number(guestTime.seconds) - Date.now() / 1000) < 30);
  // Set the guest clock an hour back through the agent, read it back, then put it right.
  const hourAgo = Math.floor(Date.now() / 1000) - 3600;
  await client.domainSetTime(dom, { seconds: BigInt(hourAgo), nseconds: 0 });
  assert.ok(Math.abs(Number((await client.domainGetTime(dom)).seconds) - hourAgo) < 30);
  const now = Date.now();
  await client.domainSetTime(dom, { seconds: BigInt(Math.floor(now / 1000)), nseconds: (now % 1000) * 1_000_000 });
  assert.ok(Math.abs(Number((await client.domainGetTime(dom)).seconds) - Date.now() / 1000) < 30);

  // Shutdown through the agent; the guest powers itself off.
  await client.domainShutdown(dom, { flags: ShutdownFlags.GUEST_AGENT });
  await recorder.waitFor((e) => e.kind === 'LIFECYCLE' && e.event === 'STOPPED', 'stopped after shutdown');
  assert.deepEqual(await client.domainGetState(dom), { state: 'SHUTOFF', reason: 'SHUTDOWN', stateCode: 5, reasonCode: 1 });

  // Start paused (a create flag), then destroy and undefine.
  const paused = await client.domainCreate(dom, { flags: CreateFlags.START_PAUSED });
  assert.equal((await client.domainGetState(paused)).state, 'PAUSED');
  await client.domainDestroy(paused);
  assert.equal((await client.domainGetState(paused)).reason, 'DESTROYED');
  await client.domainUndefine(paused);
  const gone = await client.domainLookupByName('lv-life').catch((e: unknown) => e);
  assert.ok(isNotFound(gone));
  await recorder.waitFor((e) => e.kind === 'LIFECYCLE' && e.event === 'UNDEFINED', 'undefined');

  for (const id of callbacks) await client.deregisterDomainEvent(id);
  const lifecycle = recorder.describe((e) => e.kind === 'LIFECYCLE' && e.domain.name === 'lv-life');
  console.log(`lifecycle events: ${lifecycle.join(' ')}`);
  console.log(`all events: ${recorder.describe().join(' ')}`);
  assert.deepEqual(lifecycle, [
    'DEFINED/ADDED', 'RESUMED/UNPAUSED', 'STARTED/BOOTED', 'SUSPENDED/PAUSED', 'RESUMED/UNPAUSED',
    'SHUTDOWN/GUEST', 'STOPPED/SHUTDOWN', 'STARTED/BOOTED', 'SUSPENDED/PAUSED', 'SHUTDOWN/HOST', 'STOPPED/DESTROYED', 'UNDEFINED/REMOVED',
  ]);
  await client.close();
  assert.equal(client.closed, true);
});
