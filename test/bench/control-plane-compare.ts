// The same VMI lifecycle on both control planes of the testbed, in one run: the in-repo API server
// (and its scheduler and volume binder in the test's process) against the real one (etcd,
// kube-apiserver, kube-controller-manager, kube-scheduler from tools/build-binaries). One VMI at
// a time: apply → Running, guest ready, delete → Succeeded → gone (pods too). Per lane:
// apply → Running and delete → Succeeded (P50/P95), the API requests one lifecycle costs by user,
// user agent and verb (the in-repo server's request hook; kube-apiserver's audit log on the real
// one, since its apiserver_request_total has no user or user-agent label), all requests of the
// run by verb (kube-apiserver's own apiserver_request_total, read before and after; the hook's
// records of the same span in-repo), the VMI and pod writes from apply to Running that KubeVirt's
// density test publishes (docs/performance.md compares them), and on the real lane
// kube-apiserver's and etcd's RSS (VmRSS now, VmHWM the peak). Asserts nothing.
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
  /** The User-Agent's product (`kubectl`, `podvirt-handler`, `kube-scheduler`, …). */
  readonly agent: string;
  readonly verb: string;
  /** `pods`, `virtualmachineinstances/status`, …; '' for a non-resource path. */
  readonly resource: string;
}

/**
 * The writes KubeVirt's density test counts from create to Running (its published
 * UPDATE-virtualmachineinstances, PATCH-virtualmachineinstances and PATCH-pods counts, from its
 * components' own clients): VMI updates and patches, status included, and pod patches.
 */
const KUBEVIRT_COUNTED: ReadonlyArray<readonly [string, (c: Call) => boolean]> = [
  ['update virtualmachineinstances', (c) => c.verb === 'update' && c.resource.startsWith('virtualmachineinstances')],
  ['patch virtualmachineinstances', (c) => c.verb === 'patch' && c.resource.startsWith('virtualmachineinstances')],
  ['patch pods', (c) => c.verb === 'patch' && c.resource.startsWith('pods')],
];

interface LaneFigures {
  readonly running: number[];
  readonly succeeded: number[];
  /** `user (agent)` → verb → requests per lifecycle. */
  readonly perLifecycle: Map<string, Map<string, number>>;
  /** KUBEVIRT_COUNTED's writes per VMI from apply to Running, by podvirt's components (`podvirt`) and by every client (`all`). */
  readonly toRunning: Map<string, number>;
  /** verb → requests per lifecycle over the whole run (from the first apply to the last gone), whoever sent them. */
  readonly runByVerb: Map<string, number>;
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

/** `kubectl/v1.34.2 (linux/amd64) kubernetes/abc` → `kubectl`; '' → `-`. */
function agentOf(userAgent: string | undefined): string {
  const product = (userAgent ?? '').split(/[/ ]/)[0] ?? '';
  return product === '' ? '-' : product;
}

/** The metric's verb label (POST, PUT, LIST, …) as RBAC's verb. */
const METRIC_VERBS: Readonly<Record<string, string>> = { POST: 'create', PUT: 'update' };

/** kube-apiserver's apiserver_request_total summed by verb, named as RBAC's verbs. */
function requestTotalsByVerb(metrics: string): Map<string, number> {
  const totals = new Map<string, number>();
  for (const line of metrics.split('\n')) {
    const m = /^apiserver_request_total\{(.*)\} (\S+)$/.exec(line);
    if (m === null) continue;
    const label = /(?:^|,)verb="([^"]*)"/.exec(m[1] ?? '')?.[1] ?? '?';
    const verb = METRIC_VERBS[label] ?? label.toLowerCase();
    totals.set(verb, (totals.get(verb) ?? 0) + Number(m[2]));
  }
  return totals;
}

async function rssOf(pid: number): Promise<string> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string): number => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN);
  return `VmRSS ${(kb('VmRSS') / 1024).toFixed(1)} MiB, VmHWM ${(kb('VmHWM') / 1024).toFixed(1)} MiB`;
}

async function lane(controlPlane: 'testbed' | 'real', lifecycles: number): Promise<LaneFigures> {
  const calls: Call[] = [];
  const onRequest = (r: RequestRecord): void => {
    calls.push({ at: Date.now(), user: r.user, agent: agentOf(r.userAgent), verb: r.verb, resource: r.resource });
  };
  const suite = await VmiSuite.start(controlPlane === 'real' ? { controlPlane: 'real' } : { onRequest });
  const figures: LaneFigures = { running: [], succeeded: [], perLifecycle: new Map(), toRunning: new Map(), runByVerb: new Map(), rss: [] };
  const windows: Array<[number, number]> = [];
  const startWindows: Array<[number, number]> = [];
  const scrape = async (): Promise<Map<string, number>> => {
    const raw = await suite.kubectl(['get', '--raw', '/metrics']);
    if (raw.code !== 0) throw new Error(`kubectl get --raw /metrics: ${raw.stderr}`);
    return requestTotalsByVerb(raw.stdout);
  };
  try {
    const before = controlPlane === 'real' ? await scrape() : undefined;
    for (let i = 0; i < lifecycles; i++) {
      const name = `cmp-${controlPlane}-${i}`;
      const t0 = Date.now();
      await suite.apply(guestVmi(suite.guest, name));
      const running = await suite.waitForPhase(name, 'Running', TIMEOUT_MS).catch(async (err: unknown) => {
        // Why its launcher pod ended, which the stack's process logs do not say.
        const pods = await suite.kubectl(['get', 'pods', '-o', 'jsonpath={range .items[*]}{.metadata.name} {.status.phase} {.status.reason} {.status.message} {.status.containerStatuses}{"\\n"}{end}']);
        const names = (await suite.kubectl(['get', 'pods', '-o', 'name'])).stdout.split('\n').filter((n) => n.includes(name));
        const logs = await Promise.all(names.map(async (pod) => `${pod}:\n${(await suite.kubectl(['logs', pod, '-c', 'compute', '--tail=40'])).stdout}`));
        throw new Error(`${name}: pods:\n${pods.stdout}\ncompute logs:\n${logs.join('\n')}`, { cause: err });
      });
      figures.running.push((suite.firstSeen(name, 'Running') ?? Number.NaN) - t0);
      startWindows.push([t0, suite.firstSeen(name, 'Running') ?? Date.now()]);
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
    if (before !== undefined) {
      for (const [verb, n] of await scrape()) {
        const delta = n - (before.get(verb) ?? 0);
        if (delta > 0) figures.runByVerb.set(verb, delta / lifecycles);
      }
    } else {
      const [from, to] = [windows[0]?.[0] ?? 0, windows.at(-1)?.[1] ?? 0];
      for (const c of calls.filter((c) => c.at >= from && c.at <= to)) figures.runByVerb.set(c.verb, (figures.runByVerb.get(c.verb) ?? 0) + 1 / lifecycles);
    }
    if (cp !== undefined) {
      for (const e of await readAuditLog(cp.auditLogPath)) calls.push({ at: Date.parse(e.requestReceivedTimestamp), user: e.user.username, agent: agentOf(e.userAgent), verb: e.verb, resource: `${e.objectRef?.resource ?? ''}${e.objectRef?.subresource === undefined ? '' : `/${e.objectRef.subresource}`}` });
      for (const c of ['kube-apiserver', 'etcd'] as const) figures.rss.push(`${c}: ${await rssOf(cp.process(c)?.pid ?? 0)}`);
    }
  } finally {
    await suite.close();
  }
  for (const c of calls) {
    if (!startWindows.some(([from, to]) => c.at >= from && c.at <= to)) continue;
    for (const [what, counted] of KUBEVIRT_COUNTED) {
      if (!counted(c)) continue;
      for (const who of c.agent.startsWith('podvirt-') ? ['podvirt', 'all'] : ['all']) figures.toRunning.set(`${who} ${what}`, (figures.toRunning.get(`${who} ${what}`) ?? 0) + 1 / lifecycles);
    }
  }
  for (const c of calls) {
    if (!windows.some(([from, to]) => c.at >= from && c.at <= to)) continue;
    const key = `${who(c.user)} [${c.agent}]`;
    const byVerb = figures.perLifecycle.get(key) ?? new Map<string, number>();
    byVerb.set(c.verb, (byVerb.get(c.verb) ?? 0) + 1 / lifecycles);
    figures.perLifecycle.set(key, byVerb);
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
    const verbs = (byVerb: ReadonlyMap<string, number>): string => [...byVerb].sort(([a], [b]) => a.localeCompare(b)).map(([v, n]) => `${v} ${n.toFixed(1)}`).join(', ');
    const total = (byVerb: ReadonlyMap<string, number>): string => [...byVerb.values()].reduce((a, b) => a + b, 0).toFixed(1).padStart(6);
    console.log('  API requests per lifecycle (apply → gone), by user [user agent] and verb:');
    for (const [user, byVerb] of [...f.perLifecycle].sort(([a], [b]) => a.localeCompare(b))) console.log(`    ${user.padEnd(76)} ${total(byVerb)}  (${verbs(byVerb)})`);
    const source = controlPlane === 'real' ? "kube-apiserver's apiserver_request_total, before and after" : "the server's request hook";
    for (const [who, label] of [['podvirt', "podvirt's components"], ['all', 'every client, the kubelet included']] as const) {
      console.log(`  writes KubeVirt's density test counts, per VMI from apply to Running, ${label}: ${KUBEVIRT_COUNTED.map(([what]) => `${what} ${(f.toRunning.get(`${who} ${what}`) ?? 0).toFixed(1)}`).join(', ')}`);
    }
    console.log(`  all API requests of the run per lifecycle, by verb (${source}): ${total(f.runByVerb).trim()}  (${verbs(f.runByVerb)})`);
    for (const r of f.rss) console.log(`  ${r}`);
  }
}

await main();
