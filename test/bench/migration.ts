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
//   flow     with --flow also the whole two-node flow on the testbed (controller, both handlers
//            and their proxy, kubelets): a VMI booted, then a VirtualMachineInstanceMigration
//            created; total from its creation to phase Succeeded; downtime from the source
//            launcher's report on WatchDomain.
// Total time is wall time from the start command to the end (virsh's return; the launcher's
// Succeeded report). Each case runs floor then podvirt (then flow), `rounds` times; medians.
// Prints a table; asserts nothing. Run it under the VM lock:
//
//   flock /tmp/podvirt-vm.lock node test/dist/bench/migration.js [rounds] [--flow]   (default 1)
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import * as grpc from '@grpc/grpc-js';
import { cmd } from '@podvirt/proto';
import { eventually } from '@podvirt/test-support';
import { daemonSocket, migrationOf, proxiedPair, type ProxiedPair } from '../e2e/launcher-migration-pair.js';
import { collectWatch } from '../e2e/launcher-run.js';
import { guestVmi, NS, BOOT_TIMEOUT_MS, VmiSuite } from '../e2e/vmi-stack.js';
import { waitForConsoleText } from '../testbed/index.js';

const run = promisify(execFile);
const rounds = Number(process.argv.slice(2).find((a) => /^\d+$/.test(a)) ?? '1');
const withFlow = process.argv.includes('--flow');
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

/** The whole flow on the two-node testbed: a VMI, then a VirtualMachineInstanceMigration for it. */
async function flow(suite: VmiSuite, c: Case, n: number): Promise<Measured> {
  const name = `bench-migration-${n}`;
  const vmi = withMemory(guestVmi(suite.guest, name, c.dirty === undefined ? {} : { extraKernelArgs: `podvirt.dirty=${c.dirty}` }), c.memory);
  await suite.apply(vmi);
  const running = await suite.waitForPhase(name, 'Running', BOOT_TIMEOUT_MS);
  await suite.waitForGuestReady(running);
  const podUid = Object.keys(running.status?.activePods ?? {})[0] ?? '';
  if (c.dirty !== undefined) await waitForConsoleText(suite.serialLog(running, podUid), 'PODVIRT-GUEST-DIRTY mib=', { timeoutMs: 120_000 });
  // The source launcher's own report carries the downtime (the VMI's migrationState does not).
  const source = suite.stack.nodes.find((x) => x.nodeName === running.status?.nodeName);
  const client = new cmd.CmdClient(`unix:${join(source?.podsDir ?? '', podUid, 'volumes/kubernetes.io~empty-dir/sockets/launcher-sock')}`, grpc.credentials.createInsecure());
  try {
    const watch = collectWatch({ client });
    const t0 = performance.now();
    await suite.apply({ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstanceMigration', metadata: { name, namespace: NS }, spec: { vmiName: name } });
    const phase = await eventually(async () => {
      const vmim = (await suite.custom.getNamespacedCustomObject({ group: 'kubevirt.io', version: 'v1', namespace: NS, plural: 'virtualmachineinstancemigrations', name })) as { status?: { phase?: string } };
      return vmim.status?.phase === 'Succeeded' || vmim.status?.phase === 'Failed' ? vmim.status.phase : undefined;
    }, { what: `migration ${name} ended`, deadlineMs: MIGRATION_DEADLINE_MS, stepMs: 50 });
    const totalMs = performance.now() - t0;
    if (phase !== 'Succeeded') throw new Error(`the migration of ${name} failed: ${JSON.stringify((await suite.vmi(name))?.status?.migrationState)}`);
    const end = await eventually(() => migrationOf(watch.events).find((m) => m.phase === 'Succeeded'), { what: 'the source launcher\'s report', deadlineMs: 30_000 });
    return { totalMs, downtimeMs: end.downtimeMs };
  } finally {
    client.close();
    await suite.custom.deleteNamespacedCustomObject({ group: 'kubevirt.io', version: 'v1', namespace: NS, plural: 'virtualmachineinstances', name });
    await suite.waitForGone(name);
  }
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] ?? NaN) : ((s[mid - 1] ?? NaN) + (s[mid] ?? NaN)) / 2;
}

const ms = (v: number): string => `${Math.round(v)} ms`.padStart(9);
const ratio = (a: number, b: number): string => (b > 0 ? `${(a / b).toFixed(2)}x` : 'n/a').padStart(7);

async function main(): Promise<void> {
  const suite = withFlow ? await VmiSuite.start({ nodes: 2 }) : undefined;
  const rows: string[] = [];
  try {
    let n = 0;
    for (const c of CASES) {
      const f: Measured[] = [];
      const v: Measured[] = [];
      const w: Measured[] = [];
      for (let i = 0; i < rounds; i++) {
        f.push(await floor(c));
        v.push(await podvirt(c));
        // The whole flow is the newest path: a failure is reported and the table goes on.
        if (suite !== undefined) w.push(await flow(suite, c, n++).catch((err: unknown) => (console.error(`flow failed: ${String(err)}`), { totalMs: NaN, downtimeMs: NaN })));
        console.error(`${c.guest} ${c.load} round ${i + 1}: floor ${JSON.stringify(f.at(-1))} podvirt ${JSON.stringify(v.at(-1))} flow ${JSON.stringify(w.at(-1))}`);
      }
      const med = (ms: Measured[], k: keyof Measured): number => median(ms.map((m) => m[k]));
      const [ft, fd] = [med(f, 'totalMs'), med(f, 'downtimeMs')];
      const cols = [[med(v, 'totalMs'), med(v, 'downtimeMs')], ...(suite === undefined ? [] : [[med(w, 'totalMs'), med(w, 'downtimeMs')]])];
      rows.push(`${c.guest.padEnd(8)} ${c.load.padEnd(26)} ${ms(ft)} ${cols.map(([t]) => `${ms(t ?? NaN)} ${ratio(t ?? NaN, ft)}`).join(' ')}   ${ms(fd)} ${cols.map(([, d]) => `${ms(d ?? NaN)} ${ratio(d ?? NaN, fd)}`).join(' ')}`);
    }
  } finally {
    await suite?.close();
  }
  const paths = suite === undefined ? ['podvirt'] : ['podvirt', 'flow'];
  const half = `${'floor'.padStart(9)} ${paths.map((p) => `${p.padStart(9)} ${'ratio'.padStart(7)}`).join(' ')}`;
  console.log(`live migration, TCG guests, ${rounds} round(s) per case (medians); floor = virsh migrate --live between the same two daemons;`);
  console.log(`podvirt = Migrate between two launchers through the TLS proxy${suite === undefined ? '' : '; flow = a VirtualMachineInstanceMigration on the two-node testbed'}`);
  console.log(`${''.padEnd(35)} ${'total time'.padEnd(half.length)}   downtime`);
  console.log(`${'guest'.padEnd(8)} ${'load'.padEnd(26)} ${half}   ${half}`);
  for (const r of rows) console.log(r);
}

await main();
