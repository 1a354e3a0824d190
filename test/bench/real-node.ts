// The real node against the testbed, in one run: create → Running of the test guest
// (manifests/examples/vmi-test-guest.yaml, its disk and kernel from the podvirt/test-guest
// image) on the testbed kubelet's process runtime, then on the real node (the upstream kubelet on
// containerd, podvirt installed as its pods, test/testbed/real-node/), ROUNDS VMIs one after the
// other on each. On the real node also what a VM costs there: the PSS of every process in the
// launcher pod's memory cgroup (qemu, the launcher, libvirt, the console-log sidecar, the pause
// process), and the RSS of the handler pod's processes.
// Run under the machine's VM lock, after scripts/images, with no real node up:
//   flock /tmp/podvirt-vm.lock node test/dist/bench/real-node.js
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'yaml';
import type { VirtualMachineInstance } from '@podvirt/api';
import { VmiPhaseWatch } from '../testbed/demo/vmi-phase-watch.js';
import { realNodeStack } from '../testbed/demo/demo-stack.js';
import { repoRoot } from '../testbed/guest/repo-root.js';
import { runCommand } from '../testbed/sandbox/run-command.js';
import { VmiSuite } from '../e2e/vmi-stack.js';
import { MEMORY_ROOT, pssKib, rssKib, sumMib } from './cgroup-memory.js';

const ROUNDS = 3;
const NS = 'default';
const RUNNING_TIMEOUT_S = 180;
const root = repoRoot(import.meta.url);

async function example(name: string): Promise<VirtualMachineInstance> {
  const vmi = parse(await readFile(join(root, 'manifests/examples/vmi-test-guest.yaml'), 'utf8')) as VirtualMachineInstance;
  vmi.metadata = { ...vmi.metadata, name };
  return vmi;
}

const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

async function testbedRuns(): Promise<number[]> {
  const suite = await VmiSuite.start({ runtime: 'process' });
  const ms: number[] = [];
  try {
    for (let i = 0; i < ROUNDS; i++) {
      const name = `bench-testbed-${i}`;
      const t0 = Date.now();
      await suite.apply((await example(name)) as unknown as Record<string, unknown>);
      const running = await suite.waitForPhase(name, 'Running', RUNNING_TIMEOUT_S * 1000);
      ms.push((suite.firstSeen(name, 'Running') ?? Date.now()) - t0);
      await suite.kubectl(['delete', 'vmi', name, '--wait=false']);
      await suite.waitForGone(name, 180_000);
      await suite.waitForPodsGone(running, 120_000);
    }
  } finally {
    await suite.close();
  }
  return ms;
}

interface RealNodeResult {
  readonly ms: number[];
  readonly launcherPssMib: number[];
  readonly handlerRssMib: number;
}

/** The memory cgroups (v1) of a pod on the real node: kubepods/<qos>/pod<uid>. */
async function podMemoryGroups(uid: string): Promise<string[]> {
  const found = await runCommand(['find', join(MEMORY_ROOT, 'kubepods'), '-maxdepth', '2', '-type', 'd', '-name', `pod${uid}`]);
  return found.stdout.split('\n').filter((l) => l !== '');
}

async function realNodeRuns(): Promise<RealNodeResult> {
  const kind = realNodeStack(root);
  const cluster = await kind.start();
  const running = new Map<string, number>();
  const watch = new VmiPhaseWatch(kind.kubeConfig(cluster), NS, (name, phase) => {
    if (phase === 'Running' && !running.has(name)) running.set(name, Date.now());
  });
  const ms: number[] = [];
  const launcherPssMib: number[] = [];
  let handlerRssMib = 0;
  try {
    await watch.start();
    const file = join(cluster.dir, 'vmi.json');
    for (let i = 0; i < ROUNDS; i++) {
      const name = `bench-real-${i}`;
      await writeFile(file, JSON.stringify(await example(name)));
      const t0 = Date.now();
      await cluster.admin(['apply', '-f', file]);
      await watch.waitFor(name, 'Running', RUNNING_TIMEOUT_S * 1000);
      ms.push((running.get(name) ?? Date.now()) - t0);
      // The guest up (its marker on the console), then the pod's memory.
      const pod = (JSON.parse(await cluster.admin(['get', 'pods', '-n', NS, '-l', `vm.kubevirt.io/name=${name}`, '-o', 'json'])) as { items: Array<{ metadata: { name: string; uid: string } }> }).items[0];
      if (pod === undefined) throw new Error(`no launcher pod of ${name}`);
      await cluster.admin(['wait', '--for=condition=Ready', `pod/${pod.metadata.name}`, `--timeout=${RUNNING_TIMEOUT_S}s`]);
      launcherPssMib.push(await sumMib(await podMemoryGroups(pod.metadata.uid), pssKib));
      if (i === ROUNDS - 1) {
        const handler = (await cluster.admin(['-n', 'podvirt', 'get', 'pods', '-l', 'app.kubernetes.io/name=podvirt-handler', '-o', 'jsonpath={.items[0].metadata.uid}'])).trim();
        handlerRssMib = await sumMib(await podMemoryGroups(handler), rssKib);
      }
      await cluster.admin(['delete', 'vmi', name, '--wait=true', '--timeout=180s']);
      await cluster.admin(['wait', '--for=delete', `pod/${pod.metadata.name}`, '--timeout=180s']).catch(() => undefined);
    }
  } finally {
    await watch.stop();
    await cluster.close();
  }
  return { ms, launcherPssMib, handlerRssMib };
}

async function main(): Promise<void> {
  const testbed = await testbedRuns();
  process.stderr.write(`testbed process runtime: ${JSON.stringify(testbed)}\n`);
  const real = await realNodeRuns();
  process.stderr.write(`real node: ${JSON.stringify(real)}\n`);
  const floor = median(testbed);
  const load = (await readFile('/proc/loadavg', 'utf8')).split(' ').slice(0, 3).join(' ');
  console.log(`load average at the end: ${load}`);
  console.log('| node | create → Running, each (ms) | median (ms) | × testbed |');
  console.log('|---|---|---:|---:|');
  console.log(`| testbed kubelet, process runtime | ${testbed.join(', ')} | ${floor} | 1.00 |`);
  console.log(`| real node (kubelet + containerd) | ${real.ms.join(', ')} | ${median(real.ms)} | ${(median(real.ms) / floor).toFixed(2)} |`);
  console.log(`launcher pod's memory cgroup, PSS of its processes: ${real.launcherPssMib.map((m) => m.toFixed(0)).join(', ')} MiB; handler pod's processes, RSS: ${real.handlerRssMib.toFixed(0)} MiB`);
}

await main();
