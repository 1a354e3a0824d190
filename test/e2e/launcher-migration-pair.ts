// Two launchers as the two pods of a migration (each share dir its pod's /var/run/kubevirt),
// the target prepared, and the handlers' TLS migration proxy open between them with a CA and two
// node certificates made for the run: what the e2e and the migration benchmark migrate through.
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { listenSource, listenTarget, loadMigrationTls, MIGRATION_STREAMS, migrationSocketName, migrationUris, type MigrationStream } from '@podvirt/handler';
import type { cmd } from '@podvirt/proto';
import { makeMigrationCertificates } from '@podvirt/test-support';
import { pino } from 'pino';
import { domains, startLauncher, UID, vmiRequest, waitForReady, type LauncherRun, type LauncherRunOptions } from './launcher-run.js';

export const STREAMS: readonly MigrationStream[] = [MIGRATION_STREAMS.libvirt, MIGRATION_STREAMS.memory, MIGRATION_STREAMS.disks];

/** The pod's migration socket as the node sees it (the launcher's share dir is the pod's /var/run/kubevirt). */
export const hostSocket = (run: LauncherRun, stream: MigrationStream): string => join(run.dir, 'share', 'migrationproxy', migrationSocketName(UID, stream));

export async function daemonSocket(run: LauncherRun): Promise<string> {
  const runDir = join(run.dir, 'container', 'run');
  const sock = (await readdir(runDir)).find((f) => f.endsWith('-sock') && !f.endsWith('-ro-sock') && !f.includes('admin'));
  assert.ok(sock !== undefined, `no daemon socket in ${runDir}`);
  return join(runDir, sock);
}

async function certificates(t: Pick<TestContext, 'after'>): Promise<{ a: string; b: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'podvirt-migpki-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const nodes = await makeMigrationCertificates(dir, ['node-a', 'node-b']);
  return { a: nodes.get('node-a') ?? '', b: nodes.get('node-b') ?? '' };
}

export const migrationOf = (events: readonly cmd.WatchDomainEvent[]): cmd.MigrationProgress[] =>
  domains(events).flatMap((d) => (d.migration === undefined ? [] : [d.migration]));

export interface ProxiedPair {
  readonly src: LauncherRun;
  readonly dst: LauncherRun;
  readonly request: (extra?: Partial<cmd.MigrateRequest>) => cmd.MigrateRequest;
  /** The target's domain XML (its own paths), as PrepareMigrationTarget answered. */
  readonly domainXml: string;
  readonly close: () => Promise<void>;
}

/** Source and target launchers (as pods), the target prepared, and both proxies open between them. */
export async function proxiedPair(t: Pick<TestContext, 'after'>, launcher: LauncherRunOptions = {}): Promise<ProxiedPair> {
  const pki = await certificates(t);
  const src = await startLauncher(t as TestContext, { ...launcher, podShareDir: true });
  await waitForReady(src);
  const dst = await startLauncher(t as TestContext, { ...launcher, standalone: false, podShareDir: true });
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
  return { src, dst, request, domainXml, close: async () => { await source.close(); await target.close(); } };
}

