// The launcher pod in the two runtimes of the testbed kubelet, in one run: the process runtime
// (process trees from the source tree) and the image runtime (podman + runc, from the built
// images). For each: VMI create → Running, and what the pod's VM costs in memory —
// the PSS of every process in the pod's memory cgroups, and the compute container's cgroup peak
// (cgroup v1 memory.max_usage_in_bytes) against its limit, which the controller computes as
// guest memory + overhead (packages/controller/src/render/memory-overhead.ts). The guest touches its
// memory first (the test guest's podvirt.dirty switch fills a tmpfs, then rewrites 1 MiB/s), so
// the peak counts guest pages really backed, not just the processes' start-up.
//
// Cases: the test guest (128 MiB, 64 MiB touched) in both runtimes, then a 1 GiB guest
// (768 MiB touched) in the image runtime. Run under the machine's VM lock, after scripts/images:
//   flock /tmp/podvirt-vm.lock node test/dist/bench/image-runtime.js
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { VirtualMachineInstance } from '@podvirt/api';
import { guestVmi, VmiSuite } from '../e2e/vmi-stack.js';
import { waitForConsoleText } from '../testbed/index.js';
import { memoryGroup, MEMORY_ROOT, pidsIn, pssKib } from './cgroup-memory.js';

const DIRTY_TIMEOUT_MS = 600_000;
const MI = 1024 * 1024;

interface Case { readonly runtime: 'process' | 'image'; readonly memory: string; readonly touchMib: number }
interface Result {
  readonly runtime: string;
  readonly guest: string;
  readonly createToRunningMs: number;
  readonly pssMib: number;
  readonly peakMib: number;
  readonly limitMib: number;
}

const CASES: readonly Case[] = [
  { runtime: 'process', memory: '128Mi', touchMib: 64 },
  { runtime: 'image', memory: '128Mi', touchMib: 64 },
  // 896 MiB of a 1 GiB guest woke the guest's own OOM killer before the marker: 768.
  { runtime: 'image', memory: '1Gi', touchMib: 768 },
];

async function measure(suite: VmiSuite, c: Case, name: string): Promise<Result> {
  const vmi = guestVmi(suite.guest, name, { extraKernelArgs: `podvirt.dirty=${c.touchMib},1` }) as { spec: { domain: { resources: unknown } } };
  // A limit as well as a request: the compute container gets a memory limit (guest + overhead).
  vmi.spec.domain.resources = { requests: { memory: c.memory }, limits: { memory: c.memory } };
  const t0 = Date.now();
  await suite.apply(vmi as unknown as Record<string, unknown>);
  const running: VirtualMachineInstance = await suite.waitForPhase(name, 'Running');
  const createToRunningMs = (suite.firstSeen(name, 'Running') ?? Date.now()) - t0;
  const podUid = Object.keys(running.status?.activePods ?? {})[0] ?? '';
  await waitForConsoleText(suite.serialLog(running, podUid), 'PODVIRT-GUEST-DIRTY', { timeoutMs: DIRTY_TIMEOUT_MS });
  const [qemu] = await suite.qemuPids(name);
  // The compute container's own group: /podvirt-testbed/<run>, whatever runc nests below it.
  const compute = (await memoryGroup(qemu ?? 0)).split('/').slice(0, 3).join('/');
  const parent = join(MEMORY_ROOT, compute.split('/').slice(0, 2).join('/'));
  // Every container of the pod has a group named after the pod's uid.
  const podGroups = (await readdir(parent)).filter((g) => g.includes(podUid)).map((g) => join(parent, g));
  const pids = (await Promise.all(podGroups.map((g) => pidsIn(g)))).flat();
  const pss = (await Promise.all(pids.map((p) => pssKib(p)))).reduce((a, b) => a + b, 0);
  const read = async (file: string): Promise<number> => Number((await readFile(join(MEMORY_ROOT, compute, file), 'utf8')).trim());
  const result = {
    runtime: c.runtime,
    guest: `${c.memory} (${c.touchMib} MiB touched)`,
    createToRunningMs,
    pssMib: pss / 1024,
    peakMib: (await read('memory.max_usage_in_bytes')) / MI,
    limitMib: (await read('memory.limit_in_bytes')) / MI,
  };
  await suite.kubectl(['delete', 'vmi', name, '--wait=false']);
  await suite.waitForGone(name, 180_000);
  await suite.waitForPodsGone(running, 120_000);
  return result;
}

async function main(): Promise<void> {
  const results: Result[] = [];
  for (const runtime of ['process', 'image'] as const) {
    const suite = await VmiSuite.start({ runtime });
    try {
      for (const [i, c] of CASES.entries()) {
        if (c.runtime !== runtime) continue;
        results.push(await measure(suite, c, `bench-${runtime}-${i}`));
        process.stderr.write(`${JSON.stringify(results.at(-1))}\n`);
      }
    } finally {
      await suite.close();
    }
  }
  const floor = results.find((r) => r.runtime === 'process')?.createToRunningMs ?? 1;
  console.log('| runtime | guest | create → Running (ms) | × process runtime | PSS of the pod (MiB) | compute peak (MiB) | limit (MiB) | peak / limit |');
  console.log('|---|---|---:|---:|---:|---:|---:|---:|');
  for (const r of results) {
    console.log(`| ${r.runtime} | ${r.guest} | ${r.createToRunningMs} | ${(r.createToRunningMs / floor).toFixed(2)} | ${r.pssMib.toFixed(0)} | ${r.peakMib.toFixed(0)} | ${r.limitMib.toFixed(0)} | ${(r.peakMib / r.limitMib).toFixed(2)} |`);
  }
}

await main();
