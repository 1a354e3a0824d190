// VMI create → Running latency on the testbed, with the controller and the handler as real
// processes, for batches of concurrent VMIs; split into controller (create → Scheduling: the
// launcher pod exists), pod start (Scheduling → Scheduled: images copied, monitor and launcher
// up, pod Ready) and handler (Scheduled → Running: Sync, define, start). Against the floor
// measured in the same run: the same converter's domain XML defined and started directly
// through @podvirt/libvirt on one daemon. Also delete → Succeeded (a guest that obeys ACPI)
// and qemu killed → Failed. Prints P50/P95; asserts nothing.
//
//   node test/dist/bench/vmi-latency.js [batch sizes…]      (default: 1 10 20)
import type { VirtualMachineInstance } from '@podvirt/api';
import { guestVmi, VmiSuite } from '../e2e/vmi-stack.js';
import { guestImage } from '../testbed/index.js';
import { pct } from './latency-sample.js';
import { floor } from './libvirt-floor.js';

const RUNNING_TIMEOUT_MS = 600_000;

const row = (label: string, values: readonly number[]): string => {
  const sorted = [...values].sort((a, b) => a - b);
  return `  ${label.padEnd(34)} P50 ${(pct(sorted, 50) / 1000).toFixed(2).padStart(7)} s   P95 ${(pct(sorted, 95) / 1000).toFixed(2).padStart(7)} s   (n=${values.length})`;
};

interface BatchFigures {
  controller: number[];
  podStart: number[];
  handler: number[];
  total: number[];
  ready: number[];
  deleteToSucceeded: number[];
}

async function batch(suite: VmiSuite, count: number): Promise<BatchFigures> {
  const names = Array.from({ length: count }, (_, i) => `lat-${count}-${i}`);
  const created = new Map<string, number>();
  await Promise.all(names.map(async (name) => {
    created.set(name, Date.now());
    await suite.custom.createNamespacedCustomObject({
      group: 'kubevirt.io', version: 'v1', namespace: 'default', plural: 'virtualmachineinstances',
      body: guestVmi(suite.guest, name, { gracePeriodSeconds: 60 }),
    });
  }));
  const running = await Promise.all(names.map((name) => suite.waitForPhase(name, 'Running', RUNNING_TIMEOUT_MS)));
  const readyAt = await Promise.all(running.map(async (vmi) => {
    await suite.waitForGuestReady(vmi);
    return Date.now();
  }));
  const at = (name: string, phase: string): number => suite.firstSeen(name, phase) ?? Number.NaN;
  const figures: BatchFigures = { controller: [], podStart: [], handler: [], total: [], ready: [], deleteToSucceeded: [] };
  names.forEach((name, i) => {
    const t0 = created.get(name) ?? Number.NaN;
    figures.controller.push(at(name, 'Scheduling') - t0);
    figures.podStart.push(at(name, 'Scheduled') - at(name, 'Scheduling'));
    figures.handler.push(at(name, 'Running') - at(name, 'Scheduled'));
    figures.total.push(at(name, 'Running') - t0);
    figures.ready.push((readyAt[i] ?? Number.NaN) - t0);
  });
  const deletedAt = Date.now();
  await suite.kubectl(['delete', 'vmi', ...names, '--wait=false']);
  await Promise.all(names.map((name) => suite.waitForPhase(name, 'Succeeded', RUNNING_TIMEOUT_MS)));
  for (const name of names) figures.deleteToSucceeded.push(at(name, 'Succeeded') - deletedAt);
  await Promise.all(names.map((name) => suite.waitForGone(name, RUNNING_TIMEOUT_MS)));
  await Promise.all(running.map((vmi) => suite.eventually('pods gone', async () => ((await suite.podsOf(vmi)).length === 0 ? true : undefined), RUNNING_TIMEOUT_MS)));
  return figures;
}

async function crash(suite: VmiSuite, samples: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < samples; i++) {
    const name = `crash-${i}`;
    await suite.apply(guestVmi(suite.guest, name));
    const vmi: VirtualMachineInstance = await suite.waitForPhase(name, 'Running', RUNNING_TIMEOUT_MS);
    await suite.waitForGuestReady(vmi);
    const [qemu] = await suite.qemuPids(name);
    if (qemu === undefined) throw new Error(`no qemu for ${name}`);
    const killedAt = Date.now();
    process.kill(qemu, 'SIGKILL');
    await suite.waitForPhase(name, 'Failed', RUNNING_TIMEOUT_MS);
    out.push((suite.firstSeen(name, 'Failed') ?? Number.NaN) - killedAt);
    await suite.kubectl(['delete', 'vmi', name]);
    await suite.waitForGone(name, RUNNING_TIMEOUT_MS);
  }
  return out;
}

async function main(): Promise<void> {
  const sizes = process.argv.slice(2).map(Number).filter((n) => Number.isInteger(n) && n > 0);
  const batches = sizes.length > 0 ? sizes : [1, 10, 20];
  const guest = guestImage();
  console.log('VMI create → Running on the testbed (controller and handler as processes; TCG guests, 128 MiB)');
  for (const count of batches) {
    const f = await floor(guest, count);
    console.log(`\nfloor, ${count} domain(s) defined and started at once through @podvirt/libvirt on one daemon:`);
    console.log(row('define+start → running', f.running));
    console.log(row('define+start → guest ready marker', f.ready));
  }
  const suite = await VmiSuite.start();
  try {
    for (const count of batches) {
      const b = await batch(suite, count);
      console.log(`\n${count} VMI(s) created at once:`);
      console.log(row('controller (create → Scheduling)', b.controller));
      console.log(row('pod start (Scheduling → Scheduled)', b.podStart));
      console.log(row('handler (Scheduled → Running)', b.handler));
      console.log(row('total (create → Running)', b.total));
      console.log(row('create → guest ready marker', b.ready));
      console.log(row('delete → Succeeded (ACPI)', b.deleteToSucceeded));
    }
    console.log('\nqemu killed → Failed, one VMI at a time:');
    console.log(row('kill → Failed', await crash(suite, 3)));
  } finally {
    await suite.close();
  }
}

await main();
