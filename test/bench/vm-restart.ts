// VirtualMachine restart and crash recovery on the testbed (controller and handler as real
// processes), against the floor measured in the same run: a fresh VMI created → Running. Samples
// are interleaved (fresh, restart, crash, fresh, …) so that the machine's load weighs on each kind
// alike. Restart is KubeVirt's restart subresource as it writes the VM: a Stop request naming the
// running VMI, then a Start request; it includes the old guest's graceful stop. Crash is qemu
// killed under runStrategy Always (the VMI had run, so no back-off). Each figure runs to the new
// VMI Running (polled as the e2e tests do, every 200 ms, the same for all three kinds) and to the
// guest's ready marker on its serial console. PODVIRT_TESTBED_CONTROL_PLANE=real runs it on the
// real control plane. Prints P50/P95 and the ratios of the P50s to the floor; asserts nothing.
//
//   node test/dist/bench/vm-restart.js [samples]      (default: 3)
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import type { VirtualMachine, VirtualMachineInstance } from '@podvirt/api';
import { guestVmi, NS, VmiSuite } from '../e2e/vmi-stack.js';
import { pct } from './latency-sample.js';

const TIMEOUT_MS = 600_000;
const VM_API = { group: 'kubevirt.io', version: 'v1', namespace: NS, plural: 'virtualmachines' };
const VMI_API = { group: 'kubevirt.io', version: 'v1', namespace: NS, plural: 'virtualmachineinstances' };

interface Sample {
  /** Request → the new VMI seen Running. */
  readonly running: number;
  /** Request → the new guest's ready marker. */
  readonly ready: number;
}

/** The VMI of `name` Running, other than the one with UID `notUid`; the time it was seen so. */
async function newRunning(suite: VmiSuite, name: string, notUid: string | undefined): Promise<{ vmi: VirtualMachineInstance; at: number }> {
  const vmi = await suite.eventually(`a new VMI ${name} Running`, async () => {
    const found = await suite.vmi(name);
    return found?.status?.phase === 'Running' && found.metadata.uid !== notUid ? found : undefined;
  }, TIMEOUT_MS);
  return { vmi, at: Date.now() };
}

async function timed(suite: VmiSuite, name: string, notUid: string | undefined, t0: number): Promise<{ sample: Sample; vmi: VirtualMachineInstance }> {
  const { vmi, at } = await newRunning(suite, name, notUid);
  await suite.waitForGuestReady(vmi);
  return { sample: { running: at - t0, ready: Date.now() - t0 }, vmi };
}

async function fresh(suite: VmiSuite, i: number): Promise<Sample> {
  const name = `fresh-${i}`;
  const t0 = Date.now();
  await suite.custom.createNamespacedCustomObject({ ...VMI_API, body: guestVmi(suite.guest, name, { gracePeriodSeconds: 5 }) });
  const { sample, vmi } = await timed(suite, name, undefined, t0);
  await suite.custom.deleteNamespacedCustomObject({ ...VMI_API, name });
  await suite.waitForGone(name, TIMEOUT_MS);
  await suite.waitForPodsGone(vmi);
  return sample;
}

/** KubeVirt's restart: a Stop request for the running VMI, then a Start request, on the VM's status. */
async function restart(suite: VmiSuite, name: string, current: VirtualMachineInstance): Promise<{ sample: Sample; vmi: VirtualMachineInstance }> {
  const t0 = Date.now();
  const body = { status: { stateChangeRequests: [{ action: 'Stop', uid: current.metadata.uid }, { action: 'Start' }] } };
  await suite.custom.patchNamespacedCustomObjectStatus({ ...VM_API, name, body }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
  const next = await timed(suite, name, current.metadata.uid, t0);
  await suite.waitForPodsGone(current);
  return next;
}

async function crash(suite: VmiSuite, name: string, current: VirtualMachineInstance): Promise<{ sample: Sample; vmi: VirtualMachineInstance }> {
  const [qemu] = await suite.qemuPids(name);
  if (qemu === undefined) throw new Error(`no qemu runs ${name}`);
  const t0 = Date.now();
  process.kill(qemu, 'SIGKILL');
  const next = await timed(suite, name, current.metadata.uid, t0);
  await suite.waitForPodsGone(current);
  return next;
}

const row = (label: string, values: readonly number[], floorP50?: number): string => {
  const sorted = [...values].sort((a, b) => a - b);
  const p50 = pct(sorted, 50);
  const ratio = floorP50 === undefined ? '' : `   ×${(p50 / floorP50).toFixed(2)} of the floor`;
  return `  ${label.padEnd(30)} P50 ${(p50 / 1000).toFixed(2).padStart(6)} s   P95 ${(pct(sorted, 95) / 1000).toFixed(2).padStart(6)} s   (n=${values.length})${ratio}`;
};

async function main(): Promise<void> {
  const arg = Number(process.argv[2] ?? '3');
  const samples = Number.isInteger(arg) && arg > 0 ? arg : 3;
  const suite = await VmiSuite.start();
  try {
    const version = await suite.kubectl(['version', '-o', 'json']);
    const server = (JSON.parse(version.stdout || '{}') as { serverVersion?: { gitVersion?: string } }).serverVersion?.gitVersion ?? '?';
    console.log(`VM restart and crash recovery against a fresh VMI (API server ${server}; TCG guests, 128 MiB; ${samples} samples each, interleaved)`);
    const name = 'bench-vm';
    const template = guestVmi(suite.guest, name, { gracePeriodSeconds: 5 }) as { spec: VirtualMachine['spec']['template']['spec'] };
    const vm: VirtualMachine = { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', metadata: { name, namespace: NS }, spec: { runStrategy: 'Always', template: { spec: template.spec } } };
    await suite.apply(vm as unknown as Record<string, unknown>);
    // Not timed: the VM's first start (a fresh VMI, measured apart).
    let current = (await timed(suite, name, undefined, Date.now())).vmi;
    const figures = { fresh: [] as Sample[], restart: [] as Sample[], crash: [] as Sample[] };
    for (let i = 0; i < samples; i++) {
      figures.fresh.push(await fresh(suite, i));
      const restarted = await restart(suite, name, current);
      figures.restart.push(restarted.sample);
      const crashed = await crash(suite, name, restarted.vmi);
      figures.crash.push(crashed.sample);
      current = crashed.vmi;
    }
    await suite.custom.deleteNamespacedCustomObject({ ...VM_API, name });
    await suite.waitForGone(name, TIMEOUT_MS);
    const floorRunning = pct([...figures.fresh.map((s) => s.running)].sort((a, b) => a - b), 50);
    const floorReady = pct([...figures.fresh.map((s) => s.ready)].sort((a, b) => a - b), 50);
    console.log('\nto the new VMI Running:');
    console.log(row('fresh VMI create (floor)', figures.fresh.map((s) => s.running)));
    console.log(row('VM restart', figures.restart.map((s) => s.running), floorRunning));
    console.log(row('VM crash (qemu killed)', figures.crash.map((s) => s.running), floorRunning));
    console.log('\nto the guest ready marker:');
    console.log(row('fresh VMI create (floor)', figures.fresh.map((s) => s.ready)));
    console.log(row('VM restart', figures.restart.map((s) => s.ready), floorReady));
    console.log(row('VM crash (qemu killed)', figures.crash.map((s) => s.ready), floorReady));
  } finally {
    await suite.close();
  }
}

await main();
