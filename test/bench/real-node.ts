// The real node against the testbed's kubelet, in one run, on the same control plane (the
// upstream one, ../testbed/control-plane/): create → Running of the test guest
// (manifests/examples/vmi-test-guest.yaml, its disk and kernel from the podvirt/test-guest image)
// on the testbed kubelet's process runtime, on its image runtime (podman + runc), then on the real
// node (the upstream kubelet on containerd, podvirt installed as its pods,
// test/testbed/real-node/). Each node gets VMIS VMIs, created one after the other, each waited
// for Running before the next, all left running until the last is measured.
//
// On the real node also what a VM costs there:
// - the PSS of every process in the launcher pod's memory cgroup (qemu, the launcher, libvirt's
//   daemon, the console-log sidecar, the pause process) once the pod is Ready, and of its pause
//   process and its containerd-shim-runc-v2 (one shim per pod) apart;
// - containerd, the kubelet and every shim, PSS and RSS, with no VMI and with VMIS VMIs running
//   (each the median of SAMPLES reads a second apart): what they add per VM;
// - the RSS of the handler pod's processes;
// - where the launcher pod's start goes: its sandbox and each container created, started and
//   finished, from containerd's own timestamps (crictl inspect);
// - whether the init containers' CPU limit (10m, a CFS quota of 1 ms per 100 ms under runc) is
//   what makes them slow: a pod whose init container is the test guest's copy, once with that
//   limit and once with none, in turns.
// The machine's load average is read with every figure.
// Run under the machine's VM lock, after scripts/images, with no real node up:
//   flock /tmp/podvirt-vm.lock node test/dist/bench/real-node.js [vmis] [process,image,real]
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parse } from 'yaml';
import type { VirtualMachineInstance } from '@podvirt/api';
import { VmiPhaseWatch } from '../testbed/demo/vmi-phase-watch.js';
import { realNodeStack } from '../testbed/demo/demo-stack.js';
import { repoRoot } from '../testbed/guest/repo-root.js';
import { PODVIRT_IMAGE_TAG, type RealNodeCluster } from '../testbed/real-node/real-node-cluster.js';
import { CONTAINERD_SOCKET } from '../testbed/real-node/real-node.js';
import { runCommand } from '../testbed/sandbox/run-command.js';
import { VmiSuite } from '../e2e/vmi-stack.js';
import { MEMORY_ROOT, pidsIn, pssKib, rssKib, sumMib } from './cgroup-memory.js';

const VMIS = Number(process.argv[2] ?? '3');
const NODES = (process.argv[3] ?? 'process,image,real').split(',');
const NS = 'default';
const RUNNING_TIMEOUT_S = 180;
/** Reads of the node's daemons per figure, a second apart (Go heaps move between reads). */
const SAMPLES = 5;
const COPY_ROUNDS = 2;
const root = repoRoot(import.meta.url);

async function example(name: string): Promise<VirtualMachineInstance> {
  const vmi = parse(await readFile(join(root, 'manifests/examples/vmi-test-guest.yaml'), 'utf8')) as VirtualMachineInstance;
  vmi.metadata = { ...vmi.metadata, name };
  return vmi;
}

const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
const loadavg = async (): Promise<string> => (await readFile('/proc/loadavg', 'utf8')).split(' ').slice(0, 3).join(' / ');
const log = (what: string, value: unknown): void => {
  process.stderr.write(`${what}: ${JSON.stringify(value)}\n`);
};

interface StartRun {
  readonly node: string;
  readonly ms: number[];
  /** The load average once the node's last VMI was Running. */
  readonly load: string;
}

async function testbedRuns(runtime: 'process' | 'image'): Promise<StartRun> {
  const suite = await VmiSuite.start({ runtime, controlPlane: 'real' });
  const ms: number[] = [];
  const running: VirtualMachineInstance[] = [];
  try {
    for (let i = 0; i < VMIS; i++) {
      const name = `bench-${runtime}-${i}`;
      const t0 = Date.now();
      await suite.apply((await example(name)) as unknown as Record<string, unknown>);
      running.push(await suite.waitForPhase(name, 'Running', RUNNING_TIMEOUT_S * 1000));
      ms.push((suite.firstSeen(name, 'Running') ?? Date.now()) - t0);
    }
    const load = await loadavg();
    for (const vmi of running) await suite.kubectl(['delete', 'vmi', vmi.metadata.name ?? '', '--wait=false']);
    for (const vmi of running) {
      await suite.waitForGone(vmi.metadata.name ?? '', 180_000);
      await suite.waitForPodsGone(vmi, 120_000);
    }
    return { node: `testbed kubelet, ${runtime === 'process' ? 'process runtime' : 'image runtime (podman + runc)'}`, ms, load };
  } finally {
    await suite.close();
  }
}

interface Memory {
  readonly pssMib: number;
  readonly rssMib: number;
}

async function memoryOf(pids: readonly number[]): Promise<Memory> {
  const [pss, rss] = await Promise.all([pssKib, rssKib].map(async (per) => (await Promise.all(pids.map((p) => per(p)))).reduce((a, b) => a + b, 0) / 1024));
  return { pssMib: pss ?? 0, rssMib: rss ?? 0 };
}

/** Every process whose program is `exe` (its argv[0]'s last part), with its argv. */
async function processesOf(exe: string): Promise<Array<{ pid: number; argv: string[] }>> {
  const found: Array<{ pid: number; argv: string[] }> = [];
  for (const name of (await readdir('/proc')).filter((n) => /^\d+$/.test(n))) {
    const argv = (await readFile(`/proc/${name}/cmdline`, 'utf8').catch(() => '')).split('\0').filter((a) => a !== '');
    if (argv[0]?.split('/').pop() === exe) found.push({ pid: Number(name), argv });
  }
  return found;
}

/** This node's shims (`-address` its containerd socket), by the sandbox id each serves (`-id`). */
async function shims(): Promise<Map<string, number>> {
  const byId = new Map<string, number>();
  for (const p of await processesOf('containerd-shim-runc-v2')) {
    if (p.argv[p.argv.indexOf('-address') + 1] !== CONTAINERD_SOCKET) continue;
    byId.set(p.argv[p.argv.indexOf('-id') + 1] ?? '', p.pid);
  }
  return byId;
}

interface Daemons {
  readonly containerd: Memory;
  readonly kubelet: Memory;
  readonly shims: Memory & { readonly count: number };
  readonly load: string;
}

/** containerd, the kubelet and every shim: each figure the median of SAMPLES reads a second apart. */
async function daemons(cluster: RealNodeCluster): Promise<Daemons> {
  const reads: Array<{ containerd: Memory; kubelet: Memory; shims: Memory; count: number }> = [];
  for (let i = 0; i < SAMPLES; i++) {
    if (i > 0) await sleep(1000);
    const shimPids = [...(await shims()).values()];
    reads.push({
      containerd: await memoryOf([cluster.node.process('containerd')?.pid ?? 0]),
      kubelet: await memoryOf([cluster.node.process('kubelet')?.pid ?? 0]),
      shims: await memoryOf(shimPids),
      count: shimPids.length,
    });
  }
  const mid = (pick: (r: (typeof reads)[number]) => Memory): Memory => ({ pssMib: median(reads.map((r) => pick(r).pssMib)), rssMib: median(reads.map((r) => pick(r).rssMib)) });
  return { containerd: mid((r) => r.containerd), kubelet: mid((r) => r.kubelet), shims: { ...mid((r) => r.shims), count: median(reads.map((r) => r.count)) }, load: await loadavg() };
}

/** The memory cgroups (v1) of a pod on the real node: kubepods[/<qos>]/pod<uid>. */
async function podMemoryGroups(uid: string): Promise<string[]> {
  const found = await runCommand(['find', join(MEMORY_ROOT, 'kubepods'), '-maxdepth', '2', '-type', 'd', '-name', `pod${uid}`]);
  return found.stdout.split('\n').filter((l) => l !== '');
}

async function sandboxOf(cluster: RealNodeCluster, uid: string): Promise<string> {
  const id = (await cluster.node.crictl(['pods', '--label', `io.kubernetes.pod.uid=${uid}`, '-q'])).split('\n')[0]?.trim() ?? '';
  if (id === '') throw new Error(`no sandbox of pod ${uid} in containerd`);
  return id;
}

/** An RFC 3339 time with up to 9 fractional digits (crictl's), or ns since the epoch, in ms since the epoch; undefined for the zero time. */
function instant(text: string | undefined): number | undefined {
  if (text !== undefined && /^\d+$/.test(text)) return text === '0' ? undefined : Number(BigInt(text) / 1_000_000n);
  const m = /^(.*T\d\d:\d\d:\d\d)(?:\.(\d+))?(.*)$/.exec(text ?? '');
  if (m === null) return undefined;
  const ms = Date.parse(`${m[1]}.${(m[2] ?? '').padEnd(3, '0').slice(0, 3)}${m[3]}`);
  return Number.isNaN(ms) || ms < Date.UTC(2000, 0, 1) ? undefined : ms;
}

interface ContainerTimes {
  readonly name: string;
  readonly created: number | undefined;
  readonly started: number | undefined;
  readonly finished: number | undefined;
}

/** The sandbox's and every container's created/started/finished instants, containerd's own, oldest first. */
async function podTimes(cluster: RealNodeCluster, sandbox: string): Promise<{ sandbox: number | undefined; containers: ContainerTimes[] }> {
  const pod = JSON.parse(await cluster.node.crictl(['inspectp', '-o', 'json', sandbox])) as { status: { createdAt?: string } };
  const list = JSON.parse(await cluster.node.crictl(['ps', '-a', '--pod', sandbox, '-o', 'json'])) as { containers: Array<{ id: string; metadata: { name: string } }> };
  const containers: ContainerTimes[] = [];
  for (const c of list.containers) {
    const s = (JSON.parse(await cluster.node.crictl(['inspect', '-o', 'json', c.id])) as { status: { createdAt?: string; startedAt?: string; finishedAt?: string } }).status;
    containers.push({ name: c.metadata.name, created: instant(s.createdAt), started: instant(s.startedAt), finished: instant(s.finishedAt) });
  }
  containers.sort((a, b) => (a.created ?? 0) - (b.created ?? 0));
  return { sandbox: instant(pod.status.createdAt), containers };
}

interface LauncherPod {
  readonly pssMib: number;
  readonly pause: Memory;
  readonly shim: Memory;
  readonly load: string;
  /** ms from the apply: the sandbox created, then each container. */
  readonly times: { sandbox: number | undefined; containers: ContainerTimes[] };
  readonly t0: number;
}

interface RealNodeResult {
  readonly start: StartRun;
  readonly pods: LauncherPod[];
  readonly idle: Daemons;
  readonly busy: Daemons;
  readonly handlerRssMib: number;
  readonly copy: CopyRun[];
}

async function launcherPod(cluster: RealNodeCluster, name: string, t0: number): Promise<LauncherPod> {
  const pod = (JSON.parse(await cluster.admin(['get', 'pods', '-n', NS, '-l', `vm.kubevirt.io/name=${name}`, '-o', 'json'])) as { items: Array<{ metadata: { name: string; uid: string } }> }).items[0];
  if (pod === undefined) throw new Error(`no launcher pod of ${name}`);
  await cluster.admin(['wait', '-n', NS, '--for=condition=Ready', `pod/${pod.metadata.name}`, `--timeout=${RUNNING_TIMEOUT_S}s`]);
  const groups = await podMemoryGroups(pod.metadata.uid);
  const sandbox = await sandboxOf(cluster, pod.metadata.uid);
  // The sandbox's (pause) container has the sandbox's id: its group is <pod group>/<id>.
  const pausePids = (await Promise.all(groups.map((g) => pidsIn(join(g, sandbox))))).flat();
  const shim = (await shims()).get(sandbox);
  return {
    pssMib: await sumMib(groups, pssKib),
    pause: await memoryOf(pausePids),
    shim: await memoryOf(shim === undefined ? [] : [shim]),
    load: await loadavg(),
    times: await podTimes(cluster, sandbox),
    t0,
  };
}

interface CopyRun {
  readonly cpuLimit: string;
  /** The init container's run, started → finished (containerd's timestamps). */
  readonly runMs: number;
  /** Created → started: what containerd and runc took to start it. */
  readonly startMs: number;
  readonly load: string;
}

/**
 * A pod whose init container is the launcher pod's containerDisk copy (podvirt/test-guest
 * copying the guest's files into an emptyDir, the controller's requests), with the controller's
 * CPU limit or none; its container is the pause image.
 */
async function copyPod(cluster: RealNodeCluster, name: string, cpuLimit: string | undefined): Promise<CopyRun> {
  const file = join(cluster.dir, `${name}.json`);
  const small = { requests: { cpu: '10m', memory: '40Mi' }, limits: { ...(cpuLimit === undefined ? {} : { cpu: cpuLimit }), memory: '40Mi' } };
  await writeFile(file, JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NS },
    spec: {
      initContainers: [{ name: 'copy', image: 'podvirt/test-guest:latest', imagePullPolicy: 'IfNotPresent', args: ['/disks/data'], resources: small, volumeMounts: [{ name: 'disks', mountPath: '/disks' }] }],
      containers: [{ name: 'wait', image: `podvirt/pause:${PODVIRT_IMAGE_TAG}`, imagePullPolicy: 'IfNotPresent', resources: small }],
      volumes: [{ name: 'disks', emptyDir: {} }],
      terminationGracePeriodSeconds: 5,
    },
  }));
  await cluster.admin(['apply', '-f', file]);
  await cluster.admin(['wait', '-n', NS, '--for=condition=Ready', `pod/${name}`, '--timeout=120s']);
  const uid = (await cluster.admin(['get', 'pod', '-n', NS, name, '-o', 'jsonpath={.metadata.uid}'])).trim();
  const times = await podTimes(cluster, await sandboxOf(cluster, uid));
  const load = await loadavg();
  await cluster.admin(['delete', 'pod', '-n', NS, name, '--wait=true', '--timeout=120s']);
  const copy = times.containers.find((c) => c.name === 'copy');
  if (copy?.started === undefined || copy.finished === undefined || copy.created === undefined) throw new Error(`${name}: no start and finish of its init container: ${JSON.stringify(times)}`);
  return { cpuLimit: cpuLimit ?? 'none', runMs: copy.finished - copy.started, startMs: copy.started - copy.created, load };
}

async function realNodeRuns(): Promise<RealNodeResult> {
  const kind = realNodeStack(root);
  const cluster = await kind.start();
  const running = new Map<string, number>();
  const watch = new VmiPhaseWatch(kind.kubeConfig(cluster), NS, (name, phase) => {
    if (phase === 'Running' && !running.has(name)) running.set(name, Date.now());
  });
  try {
    await watch.start();
    const idle = await daemons(cluster);
    log('real node, no VMI', idle);
    const ms: number[] = [];
    const pods: LauncherPod[] = [];
    const names: string[] = [];
    for (let i = 0; i < VMIS; i++) {
      const name = `bench-real-${i}`;
      const file = join(cluster.dir, `${name}.json`);
      await writeFile(file, JSON.stringify(await example(name)));
      const t0 = Date.now();
      await cluster.admin(['apply', '-f', file]);
      names.push(name);
      await watch.waitFor(name, 'Running', RUNNING_TIMEOUT_S * 1000);
      ms.push((running.get(name) ?? Date.now()) - t0);
      pods.push(await launcherPod(cluster, name, t0));
      log(`real node, ${name}`, { ms: ms.at(-1), pod: pods.at(-1) });
    }
    const load = await loadavg();
    const busy = await daemons(cluster);
    log(`real node, ${VMIS} VMIs`, busy);
    const handler = (await cluster.admin(['-n', 'podvirt', 'get', 'pods', '-l', 'app.kubernetes.io/name=podvirt-handler', '-o', 'jsonpath={.items[0].metadata.uid}'])).trim();
    const handlerRssMib = await sumMib(await podMemoryGroups(handler), rssKib);
    for (const name of names) await cluster.admin(['delete', 'vmi', '-n', NS, name, '--wait=false']);
    for (const name of names) {
      await cluster.admin(['wait', '-n', NS, '--for=delete', `vmi/${name}`, '--timeout=180s']).catch(() => undefined);
      await cluster.admin(['wait', '-n', NS, '--for=delete', 'pod', '-l', `vm.kubevirt.io/name=${name}`, '--timeout=180s']).catch(() => undefined);
    }
    const copy: CopyRun[] = [];
    for (let i = 0; i < COPY_ROUNDS; i++) {
      for (const limit of ['10m', undefined]) {
        copy.push(await copyPod(cluster, `bench-copy-${limit ?? 'unlimited'}-${i}`, limit));
        log('copy init container', copy.at(-1));
      }
    }
    return { start: { node: 'real node (kubelet + containerd + runc)', ms, load }, pods, idle, busy, handlerRssMib, copy };
  } finally {
    await watch.stop();
    await cluster.close();
    const left = await kind.leftovers(cluster);
    if (left.length > 0) process.stderr.write(`the real node left: ${left.join(', ')}\n`);
  }
}

const fmt = (m: number): string => m.toFixed(1);

function printRealNode(real: RealNodeResult): void {
  const mem = (m: Memory): string => `${fmt(m.pssMib)} / ${fmt(m.rssMib)}`;
  const per = (a: Memory, b: Memory): string => `${fmt((b.pssMib - a.pssMib) / VMIS)} / ${fmt((b.rssMib - a.rssMib) / VMIS)}`;
  console.log('');
  console.log(`Real node, per VM: launcher pod's memory cgroup PSS ${real.pods.map((p) => fmt(p.pssMib)).join(', ')} MiB (load ${real.pods.map((p) => p.load).join('; ')})`);
  console.log(`its pause process PSS / RSS ${real.pods.map((p) => mem(p.pause)).join(', ')} MiB; its shim PSS / RSS ${real.pods.map((p) => mem(p.shim)).join(', ')} MiB`);
  console.log(`handler pod's processes with ${VMIS} VMIs: RSS ${fmt(real.handlerRssMib)} MiB`);
  console.log('');
  console.log(`| process | no VMI, PSS / RSS (MiB) | ${VMIS} VMIs, PSS / RSS (MiB) | per VM (MiB) |`);
  console.log('|---|---:|---:|---:|');
  console.log(`| containerd | ${mem(real.idle.containerd)} | ${mem(real.busy.containerd)} | ${per(real.idle.containerd, real.busy.containerd)} |`);
  console.log(`| kubelet | ${mem(real.idle.kubelet)} | ${mem(real.busy.kubelet)} | ${per(real.idle.kubelet, real.busy.kubelet)} |`);
  console.log(`| containerd-shim-runc-v2 (${real.idle.shims.count} → ${real.busy.shims.count}) | ${mem(real.idle.shims)} | ${mem(real.busy.shims)} | ${per(real.idle.shims, real.busy.shims)} |`);
  console.log(`load: ${real.idle.load} with no VMI, ${real.busy.load} with ${VMIS}`);
  console.log('');
  console.log('Launcher pod start, ms after the apply (containerd\'s timestamps; each VMI in turn):');
  for (const p of real.pods) {
    const at = (t: number | undefined): string => (t === undefined ? '—' : String(t - p.t0));
    console.log(`  sandbox ${at(p.times.sandbox)}; ${p.times.containers.map((c) => `${c.name} created ${at(c.created)} started ${at(c.started)}${c.finished === undefined ? '' : ` finished ${at(c.finished)} (ran ${c.finished - (c.started ?? c.finished)})`}`).join('; ')}`);
  }
  console.log('');
  console.log('| copy init container, CPU limit | created → started (ms) | started → finished (ms) | load |');
  console.log('|---|---:|---:|---|');
  for (const c of real.copy) console.log(`| ${c.cpuLimit} | ${c.startMs} | ${c.runMs} | ${c.load} |`);
}

async function main(): Promise<void> {
  const runs: StartRun[] = [];
  let real: RealNodeResult | undefined;
  for (const node of NODES) {
    if (node === 'process' || node === 'image') runs.push(await testbedRuns(node));
    else if (node === 'real') runs.push((real = await realNodeRuns()).start);
    else throw new Error(`nodes are process, image and real, not "${node}"`);
    log('create → Running', runs.at(-1));
  }
  const floor = median(runs[0]?.ms ?? []);
  console.log(`| node | create → Running, each (ms) | median (ms) | × ${runs[0]?.node ?? ''} | load at its last Running |`);
  console.log('|---|---|---:|---:|---|');
  for (const r of runs) console.log(`| ${r.node} | ${r.ms.join(', ')} | ${median(r.ms)} | ${(median(r.ms) / floor).toFixed(2)} | ${r.load} |`);
  if (real !== undefined) printRealNode(real);
}

await main();
