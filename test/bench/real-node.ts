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
// - whether the console-log sidecar's CPU limit (15m, KubeVirt's) is what makes it slow to
//   start, and whether podvirt-tail adds to it: a pod whose native sidecar is the pause image (a
//   program that needs next to no CPU), then one whose sidecar is the guest-console-log
//   container's podvirt-tail, each once with that limit and once with none, in turns.
// The machine's load average is read with every figure.
//
// `real-at-once` instead of the node names: the VMIS VMIs created at once on the real node,
// create → Running P50 and P95 against the floor of the in-repo bench (libvirt-floor.ts: VMIS
// domains of the launcher's XML defined and started at once on one daemon), measured in the same
// run right before, and the medians of the launcher pods' containerd timestamps. Each VMI asks
// for the default CPU request (100m) or, where VMIS of them would not fit the node's allocatable
// CPU beside podvirt's own pods, for what does fit (printed).
// Run under the machine's VM lock, after scripts/images, with no real node up:
//   flock /tmp/podvirt-vm.lock node test/dist/bench/real-node.js [vmis] [process,image,real | real-at-once]
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parse } from 'yaml';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { toBytes, toMillis, type VirtualMachineInstance } from '@podvirt/api';
import { DEFAULT_CPU_REQUEST, renderLauncherPod } from '@podvirt/controller';
import { guestImage } from '../testbed/index.js';
import { VmiPhaseWatch } from '../testbed/demo/vmi-phase-watch.js';
import { realNodeStack } from '../testbed/demo/demo-stack.js';
import { repoRoot } from '../testbed/guest/repo-root.js';
import { PODVIRT_IMAGE_TAG, type RealNodeCluster } from '../testbed/real-node/real-node-cluster.js';
import { CONTAINERD_SOCKET } from '../testbed/real-node/real-node.js';
import { runCommand } from '../testbed/sandbox/run-command.js';
import { VmiSuite } from '../e2e/vmi-stack.js';
import { MEMORY_ROOT, pidsIn, pssKib, rssKib, sumMib } from './cgroup-memory.js';
import { pct } from './latency-sample.js';
import { floor } from './libvirt-floor.js';

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

/** crictl with a connection timeout that survives the load of 20 guests booting (its default is 2 s). */
const crictl = (cluster: RealNodeCluster, args: readonly string[]): Promise<string> => cluster.node.crictl(['--timeout', '30s', ...args]);

async function sandboxOf(cluster: RealNodeCluster, uid: string): Promise<string> {
  const id = (await crictl(cluster, ['pods', '--label', `io.kubernetes.pod.uid=${uid}`, '-q'])).split('\n')[0]?.trim() ?? '';
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
  const pod = JSON.parse(await crictl(cluster, ['inspectp', '-o', 'json', sandbox])) as { status: { createdAt?: string } };
  const list = JSON.parse(await crictl(cluster, ['ps', '-a', '--pod', sandbox, '-o', 'json'])) as { containers: Array<{ id: string; metadata: { name: string } }> };
  const containers: ContainerTimes[] = [];
  for (const c of list.containers) {
    const s = (JSON.parse(await crictl(cluster, ['inspect', '-o', 'json', c.id])) as { status: { createdAt?: string; startedAt?: string; finishedAt?: string } }).status;
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

async function launcherPodOf(cluster: RealNodeCluster, name: string): Promise<{ metadata: { name: string; uid: string } }> {
  const pod = (JSON.parse(await cluster.admin(['get', 'pods', '-n', NS, '-l', `vm.kubevirt.io/name=${name}`, '-o', 'json'])) as { items: Array<{ metadata: { name: string; uid: string } }> }).items[0];
  if (pod === undefined) throw new Error(`no launcher pod of ${name}`);
  return pod;
}

async function launcherPod(cluster: RealNodeCluster, name: string, t0: number): Promise<LauncherPod> {
  const pod = await launcherPodOf(cluster, name);
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
  /**
   * `copy`: the containerDisk copy as an init container; `sidecar`: the pause image as a native
   * sidecar; `tail`: the guest-console-log container itself (podvirt-tail of the launcher image).
   */
  readonly what: 'copy' | 'sidecar' | 'tail';
  readonly cpuLimit: string;
  /** The pod's seccomp profile: the runtime's default (as the launcher pod's) or none. */
  readonly seccomp: 'RuntimeDefault' | 'Unconfined';
  /** The copy's run, started → finished (containerd's timestamps); none for the sidecar. */
  readonly runMs: number | undefined;
  /** Created → started: what containerd and runc took to start it. */
  readonly startMs: number;
  /** Its start → the pod's container created: how long the kubelet took to go on. */
  readonly nextMs: number;
  readonly load: string;
}

/**
 * A pod whose init container is the launcher pod's containerDisk copy (podvirt/test-guest
 * copying the guest's files into an emptyDir, the controller's requests), or whose native
 * sidecar is the pause image with the guest-console-log container's resources, with the
 * controller's CPU limit or none; its container is the pause image.
 */
async function copyPod(cluster: RealNodeCluster, what: CopyRun['what'], name: string, cpuLimit: string | undefined, seccomp: CopyRun['seccomp']): Promise<CopyRun> {
  const file = join(cluster.dir, `${name}.json`);
  const resources = (requests: { cpu: string; memory: string }, memory: string) => ({ requests, limits: { ...(cpuLimit === undefined ? {} : { cpu: cpuLimit }), memory } });
  const small = resources({ cpu: '10m', memory: '40Mi' }, '40Mi');
  const init = what === 'copy'
    ? { name: what, image: 'podvirt/test-guest:latest', imagePullPolicy: 'IfNotPresent', args: ['/disks/data'], resources: small, volumeMounts: [{ name: 'disks', mountPath: '/disks' }] }
    : what === 'sidecar'
      ? { name: what, image: `podvirt/pause:${PODVIRT_IMAGE_TAG}`, imagePullPolicy: 'IfNotPresent', resources: resources({ cpu: '5m', memory: '35M' }, '60M'), restartPolicy: 'Always' }
      : {
        name: what, image: `podvirt/launcher:${PODVIRT_IMAGE_TAG}`, imagePullPolicy: 'IfNotPresent', command: ['/usr/bin/podvirt-tail'], args: ['--logfile', '/disks/virt-serial0-log'],
        resources: resources({ cpu: '5m', memory: '35M' }, '60M'), restartPolicy: 'Always', volumeMounts: [{ name: 'disks', mountPath: '/disks', readOnly: true }],
      };
  await writeFile(file, JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NS },
    spec: {
      ...(seccomp === 'RuntimeDefault' ? { securityContext: { seccompProfile: { type: seccomp } } } : {}),
      initContainers: [init],
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
  const first = times.containers.find((c) => c.name === what);
  const next = times.containers.find((c) => c.name === 'wait');
  if (first?.started === undefined || first.created === undefined || next?.created === undefined || (what === 'copy' && first.finished === undefined)) {
    throw new Error(`${name}: no start of its ${what} or of its container: ${JSON.stringify(times)}`);
  }
  return {
    what,
    cpuLimit: cpuLimit ?? 'none',
    seccomp,
    runMs: first.finished === undefined ? undefined : first.finished - first.started,
    startMs: first.started - first.created,
    nextMs: next.created - first.started,
    load,
  };
}

/**
 * The copy at 10m and with no limit, the pause sidecar and podvirt-tail at 15m and with none, in
 * turns, without a seccomp profile; then podvirt-tail under RuntimeDefault, as the launcher pod
 * runs it (runc compiles and loads the filter inside the container's cgroup, under its quota).
 */
async function startupRuns(cluster: RealNodeCluster): Promise<CopyRun[]> {
  const runs: CopyRun[] = [];
  const kinds = [
    ['copy', '10m', 'Unconfined'], ['copy', undefined, 'Unconfined'], ['sidecar', '15m', 'Unconfined'], ['sidecar', undefined, 'Unconfined'],
    ['tail', '15m', 'Unconfined'], ['tail', undefined, 'Unconfined'], ['tail', '15m', 'RuntimeDefault'], ['tail', undefined, 'RuntimeDefault'],
  ] as const;
  for (let i = 0; i < COPY_ROUNDS; i++) {
    for (const [what, limit, seccomp] of kinds) {
      runs.push(await copyPod(cluster, what, `bench-${what}-${limit ?? 'unlimited'}-${seccomp.toLowerCase()}-${i}`, limit, seccomp));
      log('start of an init container', runs.at(-1));
    }
  }
  return runs;
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
    await deleteVmis(cluster, names);
    const copy = await startupRuns(cluster);
    return { start: { node: 'real node (kubelet + containerd + runc)', ms, load }, pods, idle, busy, handlerRssMib, copy };
  } finally {
    await watch.stop();
    await cluster.close();
    const left = await kind.leftovers(cluster);
    if (left.length > 0) process.stderr.write(`the real node left: ${left.join(', ')}\n`);
  }
}

/** Deletes the VMIs and waits for them and their launcher pods to go (a timeout is left to the leftovers check). */
async function deleteVmis(cluster: RealNodeCluster, names: readonly string[]): Promise<void> {
  await cluster.admin(['delete', 'vmi', '-n', NS, ...names, '--wait=false']);
  for (const name of names) {
    await cluster.admin(['wait', '-n', NS, '--for=delete', `vmi/${name}`, '--timeout=180s']).catch(() => undefined);
    await cluster.admin(['wait', '-n', NS, '--for=delete', 'pod', '-l', `vm.kubevirt.io/name=${name}`, '--timeout=180s']).catch(() => undefined);
  }
}

interface PodSpecRequests {
  readonly containers?: ReadonlyArray<{ resources?: { requests?: Record<string, string | number> } }>;
  readonly initContainers?: ReadonlyArray<{ restartPolicy?: string; resources?: { requests?: Record<string, string | number> } }>;
}

/** What a pod asks the scheduler for (millicores, bytes): its containers and native sidecars, or its largest init container if more. */
function podRequest(spec: PodSpecRequests | undefined): { cpu: bigint; memory: bigint } {
  const of = (c: { resources?: { requests?: Record<string, string | number> } }, key: 'cpu' | 'memory'): bigint => {
    const v = c.resources?.requests?.[key];
    return v === undefined ? 0n : key === 'cpu' ? toMillis(v) : toBytes(v);
  };
  const sidecars = (spec?.initContainers ?? []).filter((c) => c.restartPolicy === 'Always');
  const plain = (spec?.initContainers ?? []).filter((c) => c.restartPolicy !== 'Always');
  const sum = (key: 'cpu' | 'memory'): bigint => [...(spec?.containers ?? []), ...sidecars].reduce((a, c) => a + of(c, key), 0n);
  const maxInit = (key: 'cpu' | 'memory'): bigint => plain.reduce((a, c) => (of(c, key) > a ? of(c, key) : a), 0n);
  const pick = (key: 'cpu' | 'memory'): bigint => (maxInit(key) > sum(key) ? maxInit(key) : sum(key));
  return { cpu: pick('cpu'), memory: pick('memory') };
}

interface Fit {
  /** The CPU request each VMI gets: the default, or less where `count` would not fit. */
  readonly cpu: string;
  readonly freeCpuMillis: number;
  readonly freeMemoryMiB: number;
  /** One launcher pod's request, as the controller renders it. */
  readonly podCpuMillis: number;
  readonly podMemoryMiB: number;
}

/** Whether `count` launcher pods of the test guest fit the node beside what runs there, and at which CPU request. */
async function fitOnNode(cluster: RealNodeCluster, base: VirtualMachineInstance, count: number): Promise<Fit> {
  const node = (JSON.parse(await cluster.admin(['get', 'nodes', '-o', 'json'])) as { items: Array<{ status: { allocatable: Record<string, string> } }> }).items[0];
  const pods = (JSON.parse(await cluster.admin(['get', 'pods', '-A', '-o', 'json'])) as { items: Array<{ spec: PodSpecRequests; status: { phase?: string } }> }).items
    .filter((p) => p.status.phase !== 'Succeeded' && p.status.phase !== 'Failed');
  const used = pods.map((p) => podRequest(p.spec)).reduce((a, r) => ({ cpu: a.cpu + r.cpu, memory: a.memory + r.memory }), { cpu: 0n, memory: 0n });
  const freeCpuMillis = toMillis(node?.status.allocatable['cpu'] ?? '0') - used.cpu;
  const freeMemory = toBytes(node?.status.allocatable['memory'] ?? '0') - used.memory;
  const render = (cpu: string): { cpu: bigint; memory: bigint } => {
    const vmi = exampleWithCpu(base, 'fit', cpu);
    return podRequest(renderLauncherPod(vmi, { image: 'fit', allowEmulation: true, random: () => 0 }).spec);
  };
  const standard = render(DEFAULT_CPU_REQUEST);
  const besideCompute = standard.cpu - toMillis(DEFAULT_CPU_REQUEST);
  const perVmi = freeCpuMillis / BigInt(count) - besideCompute;
  const cpu = perVmi >= toMillis(DEFAULT_CPU_REQUEST) ? DEFAULT_CPU_REQUEST : `${perVmi}m`;
  if (perVmi < 1n) throw new Error(`${count} VMIs do not fit the node's CPU: ${freeCpuMillis}m free, each pod asks ${besideCompute}m beside its compute container`);
  const pod = render(cpu);
  if (pod.memory * BigInt(count) > freeMemory) throw new Error(`${count} VMIs do not fit the node's memory: ${freeMemory / MIB} MiB free, each pod asks ${pod.memory / MIB} MiB`);
  return { cpu, freeCpuMillis: Number(freeCpuMillis), freeMemoryMiB: Number(freeMemory / MIB), podCpuMillis: Number(pod.cpu), podMemoryMiB: Number(pod.memory / MIB) };
}

const MIB = 1024n * 1024n;

function exampleWithCpu(base: VirtualMachineInstance, name: string, cpu: string): VirtualMachineInstance {
  const vmi = structuredClone(base);
  vmi.metadata = { ...vmi.metadata, name, namespace: NS, uid: `uid-${name}` };
  vmi.spec.domain.resources = { ...vmi.spec.domain.resources, requests: { ...vmi.spec.domain.resources?.requests, cpu } };
  return vmi;
}

interface AtOnceResult {
  readonly fit: Fit;
  /** create → Running of each VMI (ms). */
  readonly ms: number[];
  /** The floor's define+start of each domain, VMIS at once (ms). */
  readonly floor: number[];
  readonly loadBefore: string;
  readonly loadAfter: string;
  readonly pods: Array<{ t0: number; running: number; times: { sandbox: number | undefined; containers: ContainerTimes[] } }>;
  readonly startups: CopyRun[];
}

async function realAtOnce(): Promise<AtOnceResult> {
  const base = await example('template');
  const kind = realNodeStack(root);
  const cluster = await kind.start();
  const running = new Map<string, number>();
  const watch = new VmiPhaseWatch(kind.kubeConfig(cluster), NS, (name, phase) => {
    if (phase === 'Running' && !running.has(name)) running.set(name, Date.now());
  });
  const names = Array.from({ length: VMIS }, (_, i) => `bench-many-${i}`);
  try {
    await watch.start();
    const fit = await fitOnNode(cluster, base, VMIS);
    log('fit', fit);
    const loadBefore = await loadavg();
    // The floor right before, with the node idle: both see the same machine.
    const floorRun = (await floor(guestImage(), VMIS)).running;
    log('floor', floorRun);
    const custom = kind.kubeConfig(cluster).makeApiClient(CustomObjectsApi);
    const created = new Map<string, number>();
    await Promise.all(names.map(async (name) => {
      const vmi = exampleWithCpu(base, name, fit.cpu);
      delete vmi.metadata.uid;
      created.set(name, Date.now());
      await custom.createNamespacedCustomObject({ group: 'kubevirt.io', version: 'v1', namespace: NS, plural: 'virtualmachineinstances', body: vmi });
    }));
    await Promise.all(names.map((name) => watch.waitFor(name, 'Running', RUNNING_TIMEOUT_S * 1000)));
    const loadAfter = await loadavg();
    const ms = names.map((name) => (running.get(name) ?? Number.NaN) - (created.get(name) ?? Number.NaN));
    log('create → Running', { ms, loadAfter });
    const pods: AtOnceResult['pods'] = [];
    for (const name of names) {
      const pod = await launcherPodOf(cluster, name);
      pods.push({ t0: created.get(name) ?? Number.NaN, running: running.get(name) ?? Number.NaN, times: await podTimes(cluster, await sandboxOf(cluster, pod.metadata.uid)) });
    }
    await deleteVmis(cluster, names);
    const startups = await startupRuns(cluster);
    return { fit, ms, floor: floorRun, loadBefore, loadAfter, pods, startups };
  } finally {
    await watch.stop();
    await cluster.close();
    const left = await kind.leftovers(cluster);
    if (left.length > 0) process.stderr.write(`the real node left: ${left.join(', ')}\n`);
  }
}

function printAtOnce(r: AtOnceResult): void {
  const sorted = (xs: readonly number[]): number[] => [...xs].sort((a, b) => a - b);
  const p50 = pct(sorted(r.ms), 50);
  const f50 = pct(sorted(r.floor), 50);
  console.log(`Real node, ${VMIS} VMIs created at once (CPU request ${r.fit.cpu} each; the node had ${r.fit.freeCpuMillis}m CPU and ${r.fit.freeMemoryMiB} MiB free, each launcher pod asks ${r.fit.podCpuMillis}m and ${r.fit.podMemoryMiB} MiB):`);
  console.log(`  create → Running P50 ${Math.round(p50)} ms, P95 ${Math.round(pct(sorted(r.ms), 95))} ms, each: ${sorted(r.ms).map(Math.round).join(' ')}`);
  console.log(`  floor: ${VMIS} domains defined+started at once, P50 ${Math.round(f50)} ms, P95 ${Math.round(pct(sorted(r.floor), 95))} ms   ratio ×${(p50 / f50).toFixed(2)} (aim ≤ 2.5)`);
  console.log(`  load: ${r.loadBefore} before the floor, ${r.loadAfter} once all were Running`);
  console.log('  the launcher pods\' start, median over the pods, ms after each one\'s create (containerd\'s timestamps):');
  const at = (pick: (p: AtOnceResult['pods'][number]) => number | undefined): string => {
    const values = r.pods.map((p) => { const t = pick(p); return t === undefined ? Number.NaN : t - p.t0; }).filter((v) => Number.isFinite(v));
    return values.length === 0 ? '—' : String(Math.round(pct(sorted(values), 50)));
  };
  console.log(`    sandbox created ${at((p) => p.times.sandbox)}`);
  const names = r.pods[0]?.times.containers.map((c) => c.name) ?? [];
  for (const name of names) {
    const c = (p: AtOnceResult['pods'][number]): ContainerTimes | undefined => p.times.containers.find((x) => x.name === name);
    console.log(`    ${name}: created ${at((p) => c(p)?.created)}, started ${at((p) => c(p)?.started)}${r.pods.some((p) => c(p)?.finished !== undefined) ? `, finished ${at((p) => c(p)?.finished)}` : ''}`);
  }
  console.log(`    Running seen ${at((p) => p.running)}`);
  console.log('');
  printStartups(r.startups);
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
  printStartups(real.copy);
}

function printStartups(runs: readonly CopyRun[]): void {
  console.log('| init container, CPU limit, seccomp | created → started (ms) | started → finished (ms) | started → next container created (ms) | load |');
  console.log('|---|---:|---:|---:|---|');
  for (const c of runs) console.log(`| ${c.what}, ${c.cpuLimit}, ${c.seccomp} | ${c.startMs} | ${c.runMs ?? '—'} | ${c.nextMs} | ${c.load} |`);
}

async function main(): Promise<void> {
  if (NODES.includes('real-at-once')) {
    if (NODES.length > 1) throw new Error('real-at-once runs alone');
    printAtOnce(await realAtOnce());
    return;
  }
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
