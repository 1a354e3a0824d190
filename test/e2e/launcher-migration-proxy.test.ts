// Live migration between two real launchers through the handlers' TLS migration proxy, as on
// two nodes: each launcher's share dir is its pod's /var/run/kubevirt, the source launcher gets
// the unix:// URIs the handler gives it (the same in-pod paths on both sides), the source proxy
// listens on them in the source "pod" and tunnels over mutual TLS to the target proxy, which
// dials the target daemon and the target qemu's sockets in the target "pod". The guest moves
// without a reboot and the proxies leave no socket behind. A guest dirtying its memory (the test
// guest's podvirt.dirty switch) faster than the bandwidth limit hits the progress timeout.
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
import { waitForConsoleText } from '../testbed/index.js';
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

interface ProxiedPair {
  readonly src: LauncherRun;
  readonly dst: LauncherRun;
  readonly request: (extra?: Partial<cmd.MigrateRequest>) => cmd.MigrateRequest;
  readonly close: () => Promise<void>;
}

/** Source and target launchers (as pods), the target prepared, and both proxies open between them. */
async function proxiedPair(t: TestContext, extraKernelArgs?: string): Promise<ProxiedPair> {
  const pki = await certificates(t);
  const src = await startLauncher(t, { podShareDir: true, ...(extraKernelArgs === undefined ? {} : { extraKernelArgs }) });
  await waitForReady(src);
  const dst = await startLauncher(t, { standalone: false, podShareDir: true, ...(extraKernelArgs === undefined ? {} : { extraKernelArgs }) });
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
  const request = (extra: Partial<cmd.MigrateRequest> = {}): cmd.MigrateRequest => ({
    vmiJson: vmiRequest(src).vmiJson, ...migrationUris(UID), destinationXml: domainXml, blockMigration: true,
    bandwidthMibPerSecond: 0, progressTimeoutSeconds: 0, completionTimeoutPerGibSeconds: 0, allowAutoConverge: false, allowPostCopy: false,
    ...extra,
  });
  return { src, dst, request, close: async () => { await source.close(); await target.close(); } };
}

/** Bounded wait for a launcher's container to end. */
async function ended(run: LauncherRun): Promise<boolean> {
  const exit = await Promise.race([run.container.exited, new Promise<undefined>((r) => setTimeout(() => r(undefined), 60_000).unref())]);
  return exit !== undefined;
}

void test('the guest moves through the TLS migration proxy over unix:// URIs that are the same path in both pods', async (t) => {
  const { src, dst, request, close } = await proxiedPair(t);
  const watch = collectWatch(src);
  await src.cmd.migrate(request());
  await eventually(async () => ((await dst.cmd.getDomain({})).domain?.state === 'Running' ? true : undefined), { what: 'the guest running at the target', deadlineMs: 120_000 });
  await watch.ended;
  const last = migrationOf(watch.events).at(-1);
  assert.equal(last?.phase, 'Succeeded', JSON.stringify(last));
  assert.ok((last?.dataTotal ?? 0) > 0);
  const dstLog = await readFile(dst.serialLog, 'utf8').catch(() => '');
  assert.equal(dstLog.includes(src.guest.readyMarker), false, 'the target never booted the guest');
  await close();
  for (const s of STREAMS) assert.equal(existsSync(hostSocket(src, s)), false, `the source proxy removed ${migrationSocketName(UID, s)}`);
  await dst.cmd.kill(vmiRequest(dst));
  assert.ok(await ended(dst), 'the target launcher ends with its guest');
});

void test('a guest that dirties its memory faster than the bandwidth limit hits the progress timeout and stays home', async (t) => {
  const { src, dst, request } = await proxiedPair(t, 'podvirt.dirty=48');
  await waitForConsoleText(src.serialLog, 'PODVIRT-GUEST-DIRTY mib=48 rate=max', { timeoutMs: 60_000 });
  const watch = collectWatch(src);
  await src.cmd.migrate(request({ bandwidthMibPerSecond: 4, progressTimeoutSeconds: 5 }));
  const end = await eventually(() => Promise.resolve(migrationOf(watch.events).find((m) => m.phase === 'Failed')), { what: 'the migration failed', deadlineMs: 180_000 });
  assert.match(end.failureReason, /progress/i, end.failureReason);
  await eventually(async () => ((await src.cmd.getDomain({})).domain?.state === 'Running' ? true : undefined), { what: 'the guest running on the source', deadlineMs: 30_000 });
  assert.ok(await ended(dst), 'the target launcher exits with the incoming domain gone');
  await src.cmd.kill(vmiRequest(src));
  assert.ok(await ended(src), 'the source launcher ends with its guest');
});
