// A node drain against the same moves made one by one, in one run on the two-node testbed (every
// real piece: the API server's eviction, podvirt-api's webhook, the controller's evacuation, both
// handlers, TCG guests of 128 MiB). For N VMIs (LiveMigrate) booted on node a:
//   sequential  `podvirtctl migrate NAME` for each, waiting for its migration to succeed before
//               the next: a → b. Wall time from the first call to the last Succeeded.
//   drain       `kubectl drain b --ignore-daemonsets --delete-emptydir-data`: b → a, the
//               evictions turned into one migration per VMI by the controller. Wall time of kubectl.
// Each VMI's downtime in the drain is the source launcher's own report (libvirt's job
// statistics: the pause between the last pre-copy pass and the resume on the target), read on
// its WatchDomain stream. Prints a table with the 1-minute load average; asserts nothing.
//
//   flock /tmp/podvirt-vm.lock node test/dist/bench/drain.js [N…]   (default 2 3)
import { execFile } from 'node:child_process';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import type { VirtualMachineInstance } from '@podvirt/api';
import { cmd } from '@podvirt/proto';
import { eventually } from '@podvirt/test-support';
import { migrationOf } from '../e2e/launcher-migration-pair.js';
import { collectWatch } from '../e2e/launcher-run.js';
import { BOOT_TIMEOUT_MS, guestVmi, NS, VmiSuite } from '../e2e/vmi-stack.js';

const counts = process.argv.slice(2).filter((a) => /^\d+$/.test(a)).map(Number);
const NS_VALUES = counts.length > 0 ? counts : [2, 3];
const MIGRATION_DEADLINE_MS = 300_000;
const DRAIN_TIMEOUT_MS = 900_000;
const MIGRATIONS = { group: 'kubevirt.io', version: 'v1', namespace: NS, plural: 'virtualmachineinstancemigrations' };

function kubectl(suite: VmiSuite, args: string[]): Promise<{ code: number; stderr: string }> {
  const binary = suite.stack.testbed.controlPlane?.binaries.kubectl ?? 'kubectl';
  return new Promise((resolve) => {
    execFile(binary, ['--kubeconfig', suite.stack.kubeconfigPath, ...args], { timeout: DRAIN_TIMEOUT_MS, maxBuffer: 16 * 1024 * 1024 }, (err, _stdout, stderr) => {
      resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : 1, stderr });
    });
  });
}

async function must(what: string, p: Promise<{ code: number; stderr: string }>): Promise<void> {
  const r = await p;
  if (r.code !== 0) throw new Error(`${what}: ${r.stderr}`);
}

async function migrationsOf(suite: VmiSuite, name: string): Promise<Array<{ metadata: { name?: string }; spec: { vmiName: string }; status?: { phase?: string } }>> {
  const list = (await suite.custom.listNamespacedCustomObject(MIGRATIONS)) as { items: Array<{ metadata: { name?: string }; spec: { vmiName: string }; status?: { phase?: string } }> };
  return list.items.filter((m) => m.spec.vmiName === name);
}

async function onNode(suite: VmiSuite, name: string, node: string): Promise<VirtualMachineInstance> {
  return eventually(async () => {
    const v = await suite.vmi(name);
    return v?.status?.phase === 'Running' && v.status.nodeName === node && v.status.migrationState?.completed === true ? v : undefined;
  }, { what: `${name} running on ${node}`, deadlineMs: MIGRATION_DEADLINE_MS, stepMs: 50 });
}

/** The source launcher's WatchDomain stream of a running VMI: its migration report carries the downtime. */
function watchSource(suite: VmiSuite, vmi: VirtualMachineInstance): { downtimeMs: () => Promise<number>; close: () => void } {
  const podUid = Object.entries(vmi.status?.activePods ?? {}).find(([, node]) => node === vmi.status?.nodeName)?.[0] ?? '';
  const node = suite.stack.nodes.find((x) => x.nodeName === vmi.status?.nodeName);
  const client = new cmd.CmdClient(`unix:${join(node?.podsDir ?? '', podUid, 'volumes/kubernetes.io~empty-dir/sockets/launcher-sock')}`, grpc.credentials.createInsecure());
  const watch = collectWatch({ client });
  return {
    downtimeMs: async () => (await eventually(() => migrationOf(watch.events).find((m) => m.phase === 'Succeeded'), { what: `the source report of ${vmi.metadata.name ?? ''}`, deadlineMs: 30_000 })).downtimeMs,
    close: () => client.close(),
  };
}

interface Row {
  readonly n: number;
  readonly sequentialMs: number;
  readonly drainMs: number;
  readonly downtimesMs: readonly number[];
  readonly load: number;
}

async function measure(suite: VmiSuite, n: number): Promise<Row> {
  const [a, b] = suite.stack.nodes.map((x) => x.nodeName);
  if (a === undefined || b === undefined) throw new Error('two nodes expected');
  const names = Array.from({ length: n }, (_, i) => `drain-bench-${n}-${i}`);
  await must('cordon', kubectl(suite, ['cordon', b]));
  await suite.apply(...names.map((name) => {
    const m = guestVmi(suite.guest, name);
    (m['spec'] as Record<string, unknown>)['evictionStrategy'] = 'LiveMigrate';
    return m;
  }));
  for (const name of names) {
    const vmi = await suite.waitForPhase(name, 'Running', BOOT_TIMEOUT_MS);
    await suite.waitForGuestReady(vmi);
    await eventually(async () => ((await suite.vmi(name))?.status?.conditions?.some((c) => c.type === 'LiveMigratable' && c.status === 'True') === true ? true : undefined), { what: `${name} migratable`, deadlineMs: 60_000 });
  }
  await must('uncordon', kubectl(suite, ['uncordon', b]));

  // One by one, a → b, as a user with podvirtctl would.
  const t0 = performance.now();
  for (const name of names) {
    const out = await suite.podvirtctl('migrate', 'vmi', name, '--namespace', NS);
    if (out.code !== 0) throw new Error(`podvirtctl migrate ${name}: ${out.stderr}`);
    const made = out.stdout.trim();
    await eventually(async () => {
      const m = (await migrationsOf(suite, name)).find((x) => x.metadata.name === made);
      if (m?.status?.phase === 'Failed') throw new Error(`migration of ${name} failed`);
      return m?.status?.phase === 'Succeeded' ? true : undefined;
    }, { what: `migration of ${name}`, deadlineMs: MIGRATION_DEADLINE_MS, stepMs: 50 });
    await onNode(suite, name, b);
  }
  const sequentialMs = performance.now() - t0;

  // The drain of b: b → a.
  const sources = await Promise.all(names.map(async (name) => watchSource(suite, await onNode(suite, name, b))));
  const load = loadavg()[0] ?? NaN;
  const t1 = performance.now();
  await must('drain', kubectl(suite, ['drain', b, '--ignore-daemonsets', '--delete-emptydir-data', `--timeout=${DRAIN_TIMEOUT_MS / 1000 - 30}s`]));
  const drainMs = performance.now() - t1;
  const downtimesMs: number[] = [];
  try {
    for (const s of sources) downtimesMs.push(await s.downtimeMs());
  } finally {
    for (const s of sources) s.close();
  }
  await must('uncordon', kubectl(suite, ['uncordon', b]));
  for (const name of names) await suite.kubectl(['delete', 'vmi', name, '--wait=false']);
  for (const name of names) await suite.waitForGone(name);
  return { n, sequentialMs, drainMs, downtimesMs, load };
}

async function main(): Promise<void> {
  const suite = await VmiSuite.start({ nodes: 2 });
  const rows: Row[] = [];
  try {
    for (const n of NS_VALUES) {
      const row = await measure(suite, n);
      console.error(JSON.stringify(row));
      rows.push(row);
    }
  } finally {
    await suite.close();
  }
  const s = (ms: number): string => `${(ms / 1000).toFixed(1)} s`.padStart(8);
  console.log('node drain vs sequential podvirtctl migrate, two-node testbed, TCG guests of 128 MiB (idle), LiveMigrate');
  console.log(`${'N'.padStart(2)} ${'sequential'.padStart(10)} ${'drain'.padStart(8)} ${'ratio'.padStart(6)}   downtime per guest (drain)   load avg (1 min)`);
  for (const r of rows) {
    console.log(`${String(r.n).padStart(2)} ${s(r.sequentialMs).padStart(10)} ${s(r.drainMs)} ${(r.drainMs / r.sequentialMs).toFixed(2).padStart(6)}   ${r.downtimesMs.map((d) => `${d} ms`).join(', ').padEnd(26)}   ${r.load.toFixed(2)}`);
  }
}

await main();
