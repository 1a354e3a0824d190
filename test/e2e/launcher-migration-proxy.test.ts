// Live migration between two real launchers through the handlers' TLS migration proxy, as on
// two nodes: each launcher's share dir is its pod's /var/run/kubevirt, the source launcher gets
// the unix:// URIs the handler gives it (the same in-pod paths on both sides), the source proxy
// listens on them in the source "pod" and tunnels over mutual TLS to the target proxy, which
// dials the target daemon and the target qemu's sockets in the target "pod". The guest moves
// without a reboot and the proxies leave no socket behind.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { listenSource, listenTarget, loadMigrationTls, MIGRATION_STREAMS, migrationSocketName, migrationUris, type MigrationStream } from '@podvirt/handler';
import type { cmd } from '@podvirt/proto';
import { eventually, makeMigrationCertificates } from '@podvirt/test-support';
import { pino } from 'pino';
import { collectWatch, domains, startLauncher, UID, vmiRequest, waitForReady, type LauncherRun } from './launcher-run.js';

const STREAMS: readonly MigrationStream[] = [MIGRATION_STREAMS.libvirt, MIGRATION_STREAMS.memory, MIGRATION_STREAMS.disks];

/** The pod's migration socket as the node sees it (the launcher's share dir is the pod's /var/run/kubevirt). */
const hostSocket = (run: LauncherRun, stream: MigrationStream): string => join(run.dir, 'share', 'migrationproxy', migrationSocketName(UID, stream));

async function daemonSocket(run: LauncherRun): Promise<string> {
  const runDir = join(run.dir, 'container', 'run');
  const sock = (await readdir(runDir)).find((f) => f.endsWith('-sock') && !f.endsWith('-ro-sock') && !f.includes('admin'));
  assert.ok(sock !== undefined, `no daemon socket in ${runDir}`);
  return join(runDir, sock);
}

async function certificates(t: TestContext): Promise<{ a: string; b: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'podvirt-migpki-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const nodes = await makeMigrationCertificates(dir, ['node-a', 'node-b']);
  return { a: nodes.get('node-a') ?? '', b: nodes.get('node-b') ?? '' };
}

const migrationOf = (events: readonly cmd.WatchDomainEvent[]): cmd.MigrationProgress[] =>
  domains(events).flatMap((d) => (d.migration === undefined ? [] : [d.migration]));

void test('the guest moves through the TLS migration proxy over unix:// URIs that are the same path in both pods', async (t) => {
  const pki = await certificates(t);
  const src = await startLauncher(t, { podShareDir: true });
  await waitForReady(src);
  const dst = await startLauncher(t, { standalone: false, podShareDir: true });
  const { domainXml } = await dst.cmd.prepareMigrationTarget(vmiRequest(dst));
  const log = pino({ level: 'warn' });
  const target = await listenTarget({
    address: '127.0.0.1', tls: await loadMigrationTls(pki.b), log,
    streams: new Map<number, string>([
      [MIGRATION_STREAMS.libvirt, await daemonSocket(dst)],
      [MIGRATION_STREAMS.memory, hostSocket(dst, MIGRATION_STREAMS.memory)],
      [MIGRATION_STREAMS.disks, hostSocket(dst, MIGRATION_STREAMS.disks)],
    ]),
  });
  t.after(() => target.close());
  const portOf = (stream: number): number => [...target.ports].find(([, s]) => s === stream)?.[0] ?? 0;
  const source = await listenSource({
    address: '127.0.0.1', tls: await loadMigrationTls(pki.a), log,
    streams: new Map(STREAMS.map((s) => [hostSocket(src, s), portOf(s)])),
  });
  t.after(() => source.close());
  const watch = collectWatch(src);
  await src.cmd.migrate({
    vmiJson: vmiRequest(src).vmiJson, ...migrationUris(UID), destinationXml: domainXml, blockMigration: true,
    bandwidthMibPerSecond: 0, progressTimeoutSeconds: 0, completionTimeoutPerGibSeconds: 0, allowAutoConverge: false, allowPostCopy: false,
  });
  await eventually(async () => ((await dst.cmd.getDomain({})).domain?.state === 'Running' ? true : undefined), { what: 'the guest running at the target', deadlineMs: 120_000 });
  await watch.ended;
  const last = migrationOf(watch.events).at(-1);
  assert.equal(last?.phase, 'Succeeded', JSON.stringify(last));
  assert.ok((last?.dataTotal ?? 0) > 0);
  const dstLog = await readFile(dst.serialLog, 'utf8').catch(() => '');
  assert.equal(dstLog.includes(src.guest.readyMarker), false, 'the target never booted the guest');
  await source.close();
  await target.close();
  for (const s of STREAMS) assert.equal(existsSync(hostSocket(src, s)), false, `the source proxy removed ${migrationSocketName(UID, s)}`);
  await dst.cmd.kill(vmiRequest(dst));
  await Promise.race([dst.container.exited, new Promise((r) => setTimeout(r, 60_000).unref())]);
});
