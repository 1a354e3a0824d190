// Live migration through podvirt against its floor, in one run: total migration time and the
// guest's downtime (libvirt's job statistics: the pause between the last pre-copy pass and the
// resume on the target) for the 128 MiB test guest and a 1 GiB guest, idle and under a
// memory-dirtying load (the test guest's podvirt.dirty switch).
//   podvirt  two launchers as two pods; PrepareMigrationTarget on the target, Migrate on the
//            source with the handlers' unix:// URIs, every stream through the TLS migration
//            proxy (mutual TLS, certificates made for the run); downtime from the launcher's
//            MigrationProgress.downtime_ms.
//   floor    the same pair of launchers and guest, but the source daemon migrates straight to
//            the target daemon with `virsh migrate --live` (the same flags: p2p, persistent,
//            undefine source, incremental disk copy) over loopback TCP, no proxy, no TLS;
//            downtime from `virsh domjobinfo --completed` on the target.
// Total time is wall time from the start command to the end (virsh's return; the launcher's
// Succeeded report). Each case runs floor then podvirt, `rounds` times; medians. Prints a
// table; asserts nothing. Run it under the VM lock:
//
//   flock /tmp/podvirt-vm.lock node test/dist/bench/migration.js [rounds]   (default 1)
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { eventually } from '@podvirt/test-support';
import { daemonSocket, migrationOf, proxiedPair, type ProxiedPair } from '../e2e/launcher-migration-pair.js';
import { collectWatch } from '../e2e/launcher-run.js';
import { waitForConsoleText } from '../testbed/index.js';

const run = promisify(execFile);
const rounds = Number(process.argv[2] ?? '1');
const MIGRATION_DEADLINE_MS = 600_000;

interface Case {
  readonly guest: string;
  readonly memory: string;
  readonly load: string;
  /** podvirt.dirty=<this> */
  readonly dirty?: string;
}

// The load rewrites a quarter of the guest's memory at 32 MiB/s: heavy enough to cost extra
// passes, light enough that both paths converge without a bandwidth limit.
const CASES: readonly Case[] = [
  { guest: '128 MiB', memory: '128Mi', load: 'idle' },
  { guest: '128 MiB', memory: '128Mi', load: 'dirty 32 MiB @ 32 MiB/s', dirty: '32,32' },
  { guest: '1 GiB', memory: '1Gi', load: 'idle' },
  { guest: '1 GiB', memory: '1Gi', load: 'dirty 256 MiB @ 32 MiB/s', dirty: '256,32' },
];

interface Measured {
  readonly totalMs: number;
  readonly downtimeMs: number;
}

/** What startLauncher needs of a test context: cleanups, run in reverse when the case ends. */
class Scope {
  readonly #cleanups: Array<() => unknown> = [];

  after(fn: () => unknown): void {
    this.#cleanups.push(fn);
  }

  async close(): Promise<void> {
    for (const fn of this.#cleanups.splice(0).reverse()) await Promise.resolve(fn()).catch((err: unknown) => console.error('cleanup failed:', err));
  }
}

async function withPair<T>(c: Case, body: (p: ProxiedPair) => Promise<T>): Promise<T> {
  const scope = new Scope();
  try {
    const p = await proxiedPair(scope, {
      ...(c.dirty === undefined ? {} : { extraKernelArgs: `podvirt.dirty=${c.dirty}` }),
      editVmi: (vmi) => withMemory(vmi, c.memory),
    });
    if (c.dirty !== undefined) await waitForConsoleText(p.src.serialLog, 'PODVIRT-GUEST-DIRTY mib=', { timeoutMs: 120_000 });
    return await body(p);
  } finally {
    await scope.close();
  }
}

function withMemory(vmi: Record<string, unknown>, memory: string): Record<string, unknown> {
  const spec = vmi['spec'] as { domain: { resources: { requests: Record<string, string> } } };
  spec.domain.resources.requests['memory'] = memory;
  return vmi;
}

async function podvirt(c: Case): Promise<Measured> {
  return withPair(c, async (p) => {
    const watch = collectWatch(p.src);
    const t0 = performance.now();
    await p.src.cmd.migrate(p.request());
    const end = await eventually(() => migrationOf(watch.events).find((m) => m.phase !== 'Running'), { what: 'the migration ended', deadlineMs: MIGRATION_DEADLINE_MS, stepMs: 20 });
    const totalMs = performance.now() - t0;
    if (end.phase !== 'Succeeded') throw new Error(`podvirt migration ${end.phase}: ${end.failureReason}`);
    return { totalMs, downtimeMs: end.downtimeMs };
  });
}

async function floor(c: Case): Promise<Measured> {
  return withPair(c, async (p) => {
    const src = `qemu+unix:///system?socket=${await daemonSocket(p.src)}`;
    const dst = `qemu+unix:///system?socket=${await daemonSocket(p.dst)}`;
    const virsh = async (uri: string, ...args: string[]): Promise<string> => (await run('virsh', ['-q', '-c', uri, ...args], { timeout: MIGRATION_DEADLINE_MS })).stdout;
    const dom = (await virsh(src, 'list', '--name')).trim();
    const dir = await mkdtemp(join(tmpdir(), 'podvirt-bench-'));
    try {
      const xml = join(dir, 'target.xml');
      await writeFile(xml, p.domainXml);
      const t0 = performance.now();
      await virsh(src, 'migrate', '--live', '--p2p', '--persistent', '--undefinesource', '--copy-storage-inc',
        '--xml', xml, '--persistent-xml', xml, '--migrateuri', 'tcp://127.0.0.1', dom, dst);
      const totalMs = performance.now() - t0;
      const info = await virsh(dst, 'domjobinfo', '--completed', dom);
      const downtime = /Total downtime:\s+(\d+)\s*ms/.exec(info);
      if (downtime === null) throw new Error(`no downtime in virsh domjobinfo --completed:\n${info}`);
      return { totalMs, downtimeMs: Number(downtime[1]) };
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] ?? NaN) : ((s[mid - 1] ?? NaN) + (s[mid] ?? NaN)) / 2;
}

const ms = (v: number): string => `${Math.round(v)} ms`.padStart(9);
const ratio = (a: number, b: number): string => (b > 0 ? `${(a / b).toFixed(2)}x` : 'n/a').padStart(7);

async function main(): Promise<void> {
  const rows: string[] = [];
  for (const c of CASES) {
    const f: Measured[] = [];
    const v: Measured[] = [];
    for (let i = 0; i < rounds; i++) {
      f.push(await floor(c));
      v.push(await podvirt(c));
      console.error(`${c.guest} ${c.load} round ${i + 1}: floor ${JSON.stringify(f.at(-1))} podvirt ${JSON.stringify(v.at(-1))}`);
    }
    const [ft, vt, fd, vd] = [median(f.map((m) => m.totalMs)), median(v.map((m) => m.totalMs)), median(f.map((m) => m.downtimeMs)), median(v.map((m) => m.downtimeMs))];
    rows.push(`${c.guest.padEnd(8)} ${c.load.padEnd(26)} ${ms(ft)} ${ms(vt)} ${ratio(vt, ft)}   ${ms(fd)} ${ms(vd)} ${ratio(vd, fd)}`);
  }
  console.log(`live migration, TCG guests, ${rounds} round(s) per case (medians); floor = virsh migrate --live between the same two daemons`);
  console.log(`${''.padEnd(35)} ${'total time'.padEnd(27)}   downtime`);
  console.log(`${'guest'.padEnd(8)} ${'load'.padEnd(26)} ${'floor'.padStart(9)} ${'podvirt'.padStart(9)} ${'ratio'.padStart(7)}   ${'floor'.padStart(9)} ${'podvirt'.padStart(9)} ${'ratio'.padStart(7)}`);
  for (const r of rows) console.log(r);
}

await main();
