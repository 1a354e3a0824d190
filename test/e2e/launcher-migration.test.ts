// Live migration between two real launchers on this machine, each with its private libvirt
// daemon in its own mount namespace (as in two pods): the target prepares (files made, no
// domain), the source migrates peer-to-peer to the target daemon's socket with block migration
// of its container disk overlay, reports progress on WatchDomain and exits once the guest runs
// at the target — which never booted it again, and sets its clock. A cancelled migration leaves the guest home.
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import type { cmd } from '@podvirt/proto';
import { eventually } from '@podvirt/test-support';
import { collectWatch, domains, startLauncher, vmiRequest, waitForReady, type LauncherRun } from './launcher-run.js';

async function daemonUri(run: LauncherRun): Promise<string> {
  const runDir = join(run.dir, 'container', 'run');
  const sock = (await readdir(runDir)).find((f) => f.endsWith('-sock') && !f.endsWith('-ro-sock') && !f.includes('admin'));
  assert.ok(sock !== undefined, `no daemon socket in ${runDir}`);
  return `qemu+unix:///system?socket=${join(runDir, sock)}`;
}

async function pair(t: TestContext): Promise<{ src: LauncherRun; dst: LauncherRun; request: (extra?: Partial<cmd.MigrateRequest>) => cmd.MigrateRequest }> {
  const src = await startLauncher(t);
  await waitForReady(src);
  const dst = await startLauncher(t, { standalone: false });
  const { domainXml } = await dst.cmd.prepareMigrationTarget(vmiRequest(dst));
  assert.match(domainXml, new RegExp(dst.dir.replaceAll('/', '\\/')), 'the target XML names the target\'s own files');
  const destinationUri = await daemonUri(dst);
  const request = (extra: Partial<cmd.MigrateRequest> = {}): cmd.MigrateRequest => ({
    vmiJson: vmiRequest(src).vmiJson, destinationUri, migrateUri: 'tcp://127.0.0.1', disksUri: '', destinationXml: domainXml,
    blockMigration: true, bandwidthMibPerSecond: 0, progressTimeoutSeconds: 0, completionTimeoutPerGibSeconds: 0,
    allowAutoConverge: false, allowPostCopy: false, ...extra,
  });
  return { src, dst, request };
}

/** Bounded wait for a launcher's container to end (its daemon writes into the run dir until then). */
async function ended(run: LauncherRun): Promise<boolean> {
  const exit = await Promise.race([run.container.exited, new Promise<undefined>((r) => setTimeout(() => r(undefined), 60_000).unref())]);
  return exit !== undefined;
}

const migrationOf = (events: readonly cmd.WatchDomainEvent[]): cmd.MigrationProgress[] =>
  domains(events).flatMap((d) => (d.migration === undefined ? [] : [d.migration]));

void test('the guest moves live to the target launcher: progress on WatchDomain, no reboot, the source exits', async (t) => {
  const { src, dst, request } = await pair(t);
  const watch = collectWatch(src);
  await src.cmd.migrate(request());
  await eventually(async () => ((await dst.cmd.getDomain({})).domain?.state === 'Running' ? true : undefined), { what: 'the guest running at the target', deadlineMs: 120_000 });
  await watch.ended; // the source's domain is gone: it ends the stream and exits
  const progress = migrationOf(watch.events);
  assert.equal(progress[0]?.phase, 'Running');
  const last = progress.at(-1);
  assert.equal(last?.phase, 'Succeeded', JSON.stringify(last));
  assert.ok((last?.iterations ?? 0) >= 1);
  assert.ok((last?.dataTotal ?? 0) > 0);
  assert.equal(last?.mode, 'PreCopy');
  assert.ok(await ended(src), 'the source launcher exits once its guest has left');
  // The guest's clock stood still for the switch-over: the target sets it, as after an unpause.
  await eventually(() => dst.logs().some((l) => l['msg'] === 'guest clock set'), { what: 'the guest clock set at the target', deadlineMs: 30_000 });
  const dstLog = await readFile(dst.serialLog, 'utf8').catch(() => '');
  assert.equal(dstLog.includes(src.guest.readyMarker), false, 'the target never booted the guest');
  const srcLog = await readFile(src.serialLog, 'utf8');
  assert.equal(srcLog.split(src.guest.readyMarker).length - 1, 1, 'the source booted it once');
  await dst.cmd.kill(vmiRequest(dst));
  assert.ok(await ended(dst), 'the target launcher ends with its guest');
});

void test('a cancelled migration leaves the guest running on the source; post-copy is refused by name', async (t) => {
  const { src, dst, request } = await pair(t);
  await assert.rejects(src.cmd.migrate(request({ allowPostCopy: true })), /allowPostCopy/);
  const watch = collectWatch(src);
  await src.cmd.migrate(request({ bandwidthMibPerSecond: 1 }));
  await eventually(() => Promise.resolve(migrationOf(watch.events).some((m) => m.dataRemaining > 0) ? true : undefined), { what: 'progress reported', deadlineMs: 60_000 });
  await src.cmd.cancelMigration(vmiRequest(src));
  const end = await eventually(() => Promise.resolve(migrationOf(watch.events).find((m) => m.phase === 'Failed')), { what: 'the migration ended', deadlineMs: 60_000 });
  assert.equal(end.abortStatus, 'Succeeded');
  assert.equal(end.abortRequested, true);
  // libvirt resumes the guest if the abort caught it paused for the switch-over.
  await eventually(async () => ((await src.cmd.getDomain({})).domain?.state === 'Running' ? true : undefined), { what: 'the guest running on the source', deadlineMs: 30_000 });
  // The target's incoming domain ended with the migration: its launcher has nothing left to run.
  assert.ok(await ended(dst), 'the target launcher exits');
  await src.cmd.kill(vmiRequest(src));
  assert.ok(await ended(src), 'the source launcher ends with its guest');
});
