// A live migration between two private libvirt daemons on this machine through
// @podvirt/libvirt alone: the source daemon migrates peer-to-peer to the destination daemon's
// socket (the shape podvirt's handlers proxy between pods), the guest keeps running there
// without a reboot, job statistics tell how it went, and an abort leaves it on the source.
import assert from 'node:assert/strict';
import { readFile, stat, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import {
  ErrorNumber, LibvirtClient, LibvirtError, MigrateFlags, XmlFlags, domainAbortJob, domainJobStats, jobStat, migrateDomain,
} from '@podvirt/libvirt';
import type { DomainRef } from '@podvirt/libvirt';
import { eventually } from '@podvirt/test-support';
import { guestImage, startLibvirtDaemon, waitForConsoleText } from '../testbed/index.js';
import { EventRecorder, guestXml, libvirtFixture, type LibvirtFixture } from './libvirt-fixture.js';

async function destination(t: TestContext, dir: string): Promise<{ uri: string; client: LibvirtClient }> {
  const daemon = await startLibvirtDaemon({ stateDir: join(dir, 'destination') });
  t.after(() => daemon.close());
  const client = await LibvirtClient.connect({ socketPath: daemon.socketPath, timeoutMs: 30_000 });
  t.after(() => client.destroy());
  return { uri: daemon.uri, client };
}

async function runningGuest(src: LibvirtFixture, name: string): Promise<{ dom: DomainRef; serialLog: string }> {
  const { xml, serialLog } = await guestXml(src.dir, name);
  const dom = await src.client.domainCreate(await src.client.domainDefineXml(xml));
  await waitForConsoleText(serialLog, guestImage().readyMarker, { timeoutMs: 90_000 });
  return { dom, serialLog };
}

// The guest's data disk is a file of the source's own (as a container disk overlay is in its
// pod): a block migration copies it into an empty file of the same size at the destination,
// which the destination XML names; the console moves to files of the destination's own too.
const LIVE = MigrateFlags.LIVE | MigrateFlags.ABORT_ON_ERROR | MigrateFlags.NON_SHARED_DISK;

async function destinationXml(src: LibvirtFixture, dom: DomainRef, name: string): Promise<{ xml: string; disk: string; serialLog: string }> {
  const xml = await src.client.domainGetXmlDesc(dom, { flags: XmlFlags.MIGRATABLE });
  const sourceDisk = join(src.dir, `${name}.ext4`);
  const disk = join(src.dir, `${name}.dst.ext4`);
  await writeFile(disk, '');
  await truncate(disk, (await stat(sourceDisk)).size);
  const serialLog = join(src.dir, `${name}.dst.serial.log`);
  const moved = xml
    .replaceAll(sourceDisk, disk)
    .replaceAll(join(src.dir, `${name}.serial.log`), serialLog)
    .replaceAll(join(src.dir, `${name}.serial`), join(src.dir, `${name}.dst.serial`));
  return { xml: moved, disk, serialLog };
}

void test('a running guest moves live to another daemon and keeps running there without a reboot', async (t) => {
  const src = await libvirtFixture(t);
  const dst = await destination(t, src.dir);
  const recorder = new EventRecorder(src.client);
  t.after(() => recorder.stop());
  await src.client.registerDomainEvent('MIGRATION_ITERATION');
  const { dom, serialLog } = await runningGuest(src, 'lv-migrate');

  const target = await destinationXml(src, dom, 'lv-migrate');
  await migrateDomain(src.client, dom, {
    destinationUri: dst.uri, migrateUri: 'tcp://127.0.0.1', destinationXml: target.xml, migrateDisks: ['vda'], flags: LIVE, timeoutMs: 120_000,
  });

  const moved = await dst.client.domainLookupByName('lv-migrate');
  assert.deepEqual(await dst.client.domainGetState(moved), { state: 'RUNNING', reason: 'MIGRATED', stateCode: 1, reasonCode: 2 });
  assert.deepEqual((await src.client.domainGetState(dom)).state, 'SHUTOFF', 'the source keeps only the inactive definition');
  const done = await domainJobStats(src.client, dom, 1);
  assert.equal(done.type, 'COMPLETED');
  assert.ok((jobStat(done, 'memory_iteration') ?? 0) >= 1, JSON.stringify(done.stats, (_, v: unknown) => (typeof v === 'bigint' ? Number(v) : v)));
  assert.ok((jobStat(done, 'data_total') ?? 0) > 0);
  assert.equal(typeof jobStat(done, 'downtime'), 'number');
  await recorder.waitFor((e) => e.kind === 'MIGRATION_ITERATION', 'migration iteration');

  // The guest booted once: one ready marker, and it still answers its agent on the destination.
  const log = await readFile(serialLog, 'utf8');
  assert.equal(log.split(guestImage().readyMarker).length - 1, 1, 'the guest did not reboot');
  assert.equal((await readFile(target.serialLog, 'utf8').catch(() => '')).includes(guestImage().readyMarker), false, 'nor boot again at the destination');
  assert.deepEqual(await readFile(target.disk), await readFile(join(src.dir, 'lv-migrate.ext4')), 'the disk arrived whole');
  await eventually(async () => dst.client.domainAgentCommand(moved, '{"execute":"guest-ping"}', { timeoutSeconds: 5 }).catch(() => undefined), {
    what: 'the agent answering on the destination', deadlineMs: 30_000,
  });
  await dst.client.domainDestroy(moved);
});

void test('aborting a migration in flight leaves the guest running on the source and nothing on the destination', async (t) => {
  const src = await libvirtFixture(t);
  const dst = await destination(t, src.dir);
  const { dom } = await runningGuest(src, 'lv-abort');
  // 1 MiB/s keeps the copy going far longer than it takes to see it and abort it.
  const target = await destinationXml(src, dom, 'lv-abort');
  const migrating = migrateDomain(src.client, dom, {
    destinationUri: dst.uri, migrateUri: 'tcp://127.0.0.1', destinationXml: target.xml, migrateDisks: ['vda'], bandwidthMiBs: 1, flags: LIVE, timeoutMs: 120_000,
  });
  const outcome = migrating.then(() => undefined, (err: unknown) => err);
  const active = await eventually(async () => {
    const stats = await domainJobStats(src.client, dom);
    return stats.type === 'UNBOUNDED' && (jobStat(stats, 'data_remaining') ?? 0) > 0 ? stats : undefined;
  }, { what: 'the migration job running', deadlineMs: 60_000 });
  assert.ok((jobStat(active, 'data_total') ?? 0) > 0);
  await domainAbortJob(src.client, dom);
  const err = await outcome;
  assert.ok(err instanceof LibvirtError, String(err));
  assert.equal(err.code, ErrorNumber.OPERATION_ABORTED);
  assert.equal((await src.client.domainGetState(dom)).state, 'RUNNING');
  assert.deepEqual(await dst.client.listAllDomains(), []);
  await src.client.domainDestroy(dom);
});
