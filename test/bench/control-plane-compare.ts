// The same VMI lifecycle on both control planes of the testbed, in one run: the in-repo API server
// (and its scheduler and volume binder in the test's process) against the real one (etcd,
// kube-apiserver, kube-controller-manager, kube-scheduler from tools/build-binaries). One VMI at
// a time: apply → Running, guest ready, delete → Succeeded → gone (pods too). Per lane:
// apply → Running and delete → Succeeded (P50/P95), the API requests one lifecycle costs by user
// and verb (the in-repo server's request hook; kube-apiserver's audit log on the real one), and on
// the real lane kube-apiserver's and etcd's RSS (VmRSS now, VmHWM the peak). Asserts nothing.
//
//   node test/dist/bench/control-plane-compare.js [lifecycles per lane]      (default 5)
import { readFile } from 'node:fs/promises';
import type { RequestRecord } from '../testbed/apiserver/index.js';
import { readAuditLog } from '../testbed/control-plane/audit-log.js';
import { guestVmi, VmiSuite } from '../e2e/vmi-stack.js';
import { pct } from './latency-sample.js';

const TIMEOUT_MS = 300_000;

interface Call {
  readonly at: number;
  readonly user: string;
  readonly verb: string;
}

interface LaneFigures {
  readonly running: number[];
  readonly succeeded: number[];
  /** user → verb → requests per lifecycle. */
  readonly perLifecycle: Map<string, Map<string, number>>;
  readonly rss: string[];
}

const row = (label: string, values: readonly number[]): string => {
  const sorted = [...values].sort((a, b) => a - b);
  return `  ${label.padEnd(28)} P50 ${(pct(sorted, 50) / 1000).toFixed(2).padStart(6)} s   P95 ${(pct(sorted, 95) / 1000).toFixed(2).padStart(6)} s   (n=${values.length})`;
};

/**
 * The user as the lane knows it. The in-repo server takes the bearer token as the user: podvirt's
 * processes send their ServiceAccount's name, everything in the test's process sends none.
 */
function who(user: string): string {
  if (user === '') return '(no token: the test, kubectl, the testbed kubelet and scheduler)';
  if (user === 'kubernetes-admin') return 'kubernetes-admin (the test, kubectl)';
  return user;
}

async function rssOf(pid: number): Promise<string> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string): number => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN);
  return `VmRSS ${(kb('VmRSS') / 1024).toFixed(1)} MiB, VmHWM ${(kb('VmHWM') / 1024).toFixed(1)} MiB`;
}

async function lane(controlPlane: 'testbed' | 'real', lifecycles: number): Promise<LaneFigures> {
  const calls: Call[] = [];
  const onRequest = (r: RequestRecord): void => {
    calls.push({ at: Date.now(), user: r.user, verb: r.verb });
  };
  const suite = await VmiSuite.start(controlPlane === 'real' ? { controlPlane: 'real' } : { onRequest });
  const figures: LaneFigures = { running: [], succeeded: [], perLifecycle: new Map(), rss: [] };
  const windows: Array<[number, number]> = [];
  try {
    for (let i = 0; i < lifecycles; i++) {
      const name = `cmp-${controlPlane}-${i}`;
      const t0 = Date.now();
      await suite.apply(guestVmi(suite.guest, name));
      const running = await suite.waitForPhase(name, 'Running', TIMEOUT_MS);
      figures.running.push((suite.firstSeen(name, 'Running') ?? Number.NaN) - t0);
      await suite.waitForGuestReady(running);
      const deletedAt = Date.now();
      await suite.kubectl(['delete', 'vmi', name, '--wait=false']);
      await suite.waitForPhase(name, 'Succeeded', TIMEOUT_MS);
      figures.succeeded.push((suite.firstSeen(name, 'Succeeded') ?? Number.NaN) - deletedAt);
      await suite.waitForGone(name, TIMEOUT_MS);
      await suite.waitForPodsGone(running, TIMEOUT_MS);
      windows.push([t0, Date.now()]);
    }
    const cp = suite.stack.testbed.controlPlane;
    if (cp !== undefined) {
      for (const e of await readAuditLog(cp.auditLogPath)) calls.push({ at: Date.parse(e.requestReceivedTimestamp), user: e.user.username, verb: e.verb });
      for (const c of ['kube-apiserver', 'etcd'] as const) figures.rss.push(`${c}: ${await rssOf(cp.process(c)?.pid ?? 0)}`);
    }
  } finally {
    await suite.close();
  }
  for (const c of calls) {
    if (!windows.some(([from, to]) => c.at >= from && c.at <= to)) continue;
    const byVerb = figures.perLifecycle.get(who(c.user)) ?? new Map<string, number>();
    byVerb.set(c.verb, (byVerb.get(c.verb) ?? 0) + 1 / lifecycles);
    figures.perLifecycle.set(who(c.user), byVerb);
  }
  return figures;
}

async function main(): Promise<void> {
  const lifecycles = Number(process.argv[2] ?? 5);
  if (!Number.isInteger(lifecycles) || lifecycles < 1) throw new Error(`lifecycles per lane: a positive integer, not ${process.argv[2] ?? ''}`);
  console.log(`One VMI at a time, ${lifecycles} lifecycles per lane (TCG guest, 128 MiB)`);
  for (const controlPlane of ['testbed', 'real'] as const) {
    const f = await lane(controlPlane, lifecycles);
    console.log(`\n${controlPlane === 'real' ? 'real control plane (kube-apiserver, etcd, kube-controller-manager, kube-scheduler)' : 'in-repo API server'}:`);
    console.log(row('apply → Running', f.running));
    console.log(row('delete → Succeeded', f.succeeded));
    console.log('  API requests per lifecycle (apply → gone), by user and verb:');
    for (const [user, byVerb] of [...f.perLifecycle].sort(([a], [b]) => a.localeCompare(b))) {
      const total = [...byVerb.values()].reduce((a, b) => a + b, 0);
      const verbs = [...byVerb].sort(([a], [b]) => a.localeCompare(b)).map(([v, n]) => `${v} ${n.toFixed(1)}`).join(', ');
      console.log(`    ${user.padEnd(58)} ${total.toFixed(1).padStart(6)}  (${verbs})`);
    }
    for (const r of f.rss) console.log(`  ${r}`);
  }
}

await main();
