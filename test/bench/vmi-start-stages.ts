// Where a VMI's start spends its time, from the processes' own timestamps, against floors
// measured in the same run. For one VMI at a time (several samples, median per stage):
//
//   pod created (Scheduling) → monitor exec → monitor main → launcher exec → launcher main →
//   libvirt daemon up → launcher socket ready → Scheduled → Sync → VMI converted (images
//   inspected) → files prepared (overlays) → domain defined → domain started → Running
//
// exec times are each process's own `performance.timeOrigin` (logged as `startedAt`), the
// others the `time` of the launcher pod's log lines; the phases are when a watch first saw
// them. Then: the same for N VMIs created at once (create → Running), and pause+unpause through
// the handler's node API. Floors: the launcher's domain XML defined and started straight
// through @podvirt/libvirt (one domain, and N at once), each taken right before what it is
// compared with, and raw suspend+resume of another guest of the launcher's own domain XML,
// timed in turns with pause+unpause.
// pause+unpause is also timed straight on the launcher's socket, which splits the node API's
// time into the handler's part and the launcher's; all three are timed from a process of their
// own (pause-probe.ts), as a user's client would call.
// Prints the table and the ratios; asserts nothing.
//
//   flock /tmp/podvirt-vm.lock node test/dist/bench/vmi-start-stages.js [samples] [concurrent] [iterations]
//   (default: 5 samples, 20 concurrent, 30 pause+unpause iterations; a part given 0 is left out)
//   With PODVIRT_TRACE_OPS=1 in its environment the handler and the launchers log each pause's and
//   unpause's steps (every await on the answer's path, each libvirt round trip), and the
//   benchmark prints their medians after the pause+unpause figures (the logging costs a little:
//   compare ratios from untraced runs).
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { VirtualMachineInstance } from '@podvirt/api';
import { discoverLauncherSocket } from '@podvirt/handler';
import { nodeApiSocket } from '../e2e/handler-node.js';
import { childrenOf, memoryRollup, parentOf, type ProcStat } from '../e2e/monitor-procfs.js';
import { guestVmi, NS, VmiSuite } from '../e2e/vmi-stack.js';
import { guestImage, type GuestImage } from '../testbed/index.js';
import { pct, WARMUP } from './latency-sample.js';
import { bootRawGuest, floor } from './libvirt-floor.js';
import type { PauseProbeResult } from './pause-probe.js';

const execFileAsync = promisify(execFile);

const TIMEOUT_MS = 600_000;

interface Stage {
  readonly label: string;
  /** The time of this stage in a launcher pod's log lines (ms since the epoch). */
  readonly at: (lines: readonly LogLine[], phases: (phase: string) => number) => number;
}

type LogLine = Record<string, unknown> & { msg?: string; time?: string | number };

const timeOf = (line: LogLine | undefined, field?: string): number => {
  if (line === undefined) return Number.NaN;
  const value = field === undefined ? line.time : line[field];
  return typeof value === 'number' ? value : typeof value === 'string' ? new Date(value).getTime() : Number.NaN;
};
const line = (lines: readonly LogLine[], msg: string): LogLine | undefined => lines.find((l) => l.msg === msg);

const STAGES: readonly Stage[] = [
  { label: 'pod created (Scheduling seen)', at: (_, phase) => phase('Scheduling') },
  { label: 'monitor exec', at: (l) => timeOf(line(l, 'monitor started'), 'startedAt') },
  { label: 'monitor main', at: (l) => timeOf(line(l, 'monitor started')) },
  { label: 'launcher exec', at: (l) => timeOf(line(l, 'launcher starting'), 'startedAt') },
  { label: 'launcher main', at: (l) => timeOf(line(l, 'launcher starting')) },
  { label: 'libvirt daemon up', at: (l) => timeOf(line(l, 'libvirt daemon started')) },
  { label: 'launcher socket ready', at: (l) => timeOf(line(l, 'launcher ready')) },
  { label: 'Scheduled seen', at: (_, phase) => phase('Scheduled') },
  { label: 'Sync received', at: (l) => timeOf(line(l, 'domain defined'), 'syncStartedAt') },
  { label: 'VMI converted', at: (l) => timeOf(line(l, 'domain defined'), 'convertedAt') },
  { label: 'files prepared', at: (l) => timeOf(line(l, 'domain defined'), 'preparedAt') },
  { label: 'domain defined', at: (l) => timeOf(line(l, 'domain defined')) },
  { label: 'domain started', at: (l) => timeOf(line(l, 'domain started')) },
  { label: 'Running seen', at: (_, phase) => phase('Running') },
];

const median = (values: readonly number[]): number => pct([...values].sort((a, b) => a - b), 50);
const ms = (v: number): string => (Number.isFinite(v) ? `${Math.round(v)}`.padStart(6) : '     ?');

async function launcherLog(suite: VmiSuite, vmi: VirtualMachineInstance): Promise<LogLine[]> {
  const [pod] = await suite.podsOf(vmi);
  const out = await suite.kubectl(['logs', '-n', NS, pod?.metadata?.name ?? '', '-c', 'compute']);
  if (out.code !== 0) throw new Error(`kubectl logs failed: ${out.stderr}`);
  return out.stdout.split('\n').flatMap((text) => {
    try {
      const parsed: unknown = JSON.parse(text);
      return typeof parsed === 'object' && parsed !== null ? [parsed as LogLine] : [];
    } catch {
      return [];
    }
  });
}

/** A Running VMI's stage times, ms after its pod was created (the first stage). */
async function stageTimes(suite: VmiSuite, vmi: VirtualMachineInstance): Promise<number[]> {
  const name = vmi.metadata.name ?? '';
  // 'domain started' is logged right after the call returns; the Running write follows it.
  const lines = await suite.eventually('launcher log complete', async () => {
    const l = await launcherLog(suite, vmi);
    return line(l, 'domain started') === undefined ? undefined : l;
  }, 30_000);
  const phase = (p: string): number => suite.firstSeen(name, p) ?? Number.NaN;
  const times = STAGES.map((s) => s.at(lines, phase));
  const base = times[0] ?? Number.NaN;
  return times.map((t) => t - base);
}

/** The median of each stage over `runs`, and the step from the one before. */
function printStages(runs: readonly (readonly number[])[]): void {
  console.log(`  ${'stage'.padEnd(32)}     at   step`);
  let previous = 0;
  STAGES.forEach((stage, i) => {
    const at = median(runs.map((r) => r[i] ?? Number.NaN));
    console.log(`  ${stage.label.padEnd(32)} ${ms(at)} ${i === 0 ? '' : ms(at - previous)}`);
    previous = at;
  });
}

/** One VMI created, run to Running, its stage times (ms after the pod was created), deleted. */
async function oneStart(suite: VmiSuite, name: string): Promise<number[]> {
  await suite.apply(guestVmi(suite.guest, name, { gracePeriodSeconds: 5 }));
  const vmi = await suite.waitForPhase(name, 'Running', TIMEOUT_MS);
  const times = await stageTimes(suite, vmi);
  await suite.kubectl(['delete', 'vmi', name, '--wait=false']);
  await suite.waitForGone(name, TIMEOUT_MS);
  await suite.waitForPodsGone(vmi, TIMEOUT_MS);
  return times;
}

/** `count` VMIs created at once: each one's create → Running, and its stage times. */
async function concurrent(suite: VmiSuite, count: number): Promise<{ totals: number[]; runs: number[][] }> {
  const names = Array.from({ length: count }, (_, i) => `stage-many-${i}`);
  const created = new Map<string, number>();
  await Promise.all(names.map(async (name) => {
    created.set(name, Date.now());
    await suite.custom.createNamespacedCustomObject({
      group: 'kubevirt.io', version: 'v1', namespace: NS, plural: 'virtualmachineinstances', body: guestVmi(suite.guest, name, { gracePeriodSeconds: 5 }),
    });
  }));
  const running = await Promise.all(names.map((name) => suite.waitForPhase(name, 'Running', TIMEOUT_MS)));
  const totals = names.map((name) => (suite.firstSeen(name, 'Running') ?? Number.NaN) - (created.get(name) ?? Number.NaN));
  const runs: number[][] = [];
  for (const vmi of running) runs.push(await stageTimes(suite, vmi));
  await suite.kubectl(['delete', 'vmi', ...names, '--wait=false']);
  for (const name of names) await suite.waitForGone(name, TIMEOUT_MS);
  for (const vmi of running) await suite.waitForPodsGone(vmi, TIMEOUT_MS);
  return { totals, runs };
}

/**
 * pause+unpause through the node API, straight to the VMI's launcher (its cmd socket), and the
 * floor (suspend+resume of a guest on a daemon of its own), timed in turns by pause-probe in a
 * process of its own: this one hosts the testbed's API server.
 */
async function pauseUnpause(suite: VmiSuite, iterations: number): Promise<PauseProbeResult & { traced: LogLine[]; pss: Map<string, Memory> }> {
  const name = 'stage-pause';
  const raw = await bootRawGuest();
  try {
    await suite.apply(guestVmi(suite.guest, name, { gracePeriodSeconds: 5 }));
    const vmi = await suite.waitForPhase(name, 'Running', TIMEOUT_MS);
    try {
      await suite.waitForGuestReady(vmi);
      const found = await discoverLauncherSocket(vmi, suite.stack.nodeName, suite.stack.podsDir);
      if (found.kind !== 'found') throw new Error(`no launcher socket for ${name}: ${found.kind}`);
      const probe = fileURLToPath(new URL('./pause-probe.js', import.meta.url));
      const pids = { ...(await podPids(suite, name)), handler: suite.stack.handler.pid, controller: suite.stack.controller.pid, 'podvirt-api': suite.stack.api.pid, testbed: process.pid };
      const args = [probe, nodeApiSocket(suite.stack), found.path, NS, name, String(iterations), JSON.stringify(vmi), raw.socketPath, raw.domain, raw.plainDomain, JSON.stringify(pids)];
      const handlerFrom = suite.stack.handler.lines.length;
      // The probe stops the handler for some pairs and continues it after each; a probe killed
      // in between would leave it stopped.
      const { stdout } = await execFileAsync(process.execPath, args, { timeout: TIMEOUT_MS })
        .finally(() => continueProcess(suite.stack.handler.pid));
      // With PODVIRT_TRACE_OPS=1 both sides log each call's steps ('call traced').
      const traced = [...suite.stack.handler.lines.slice(handlerFrom), ...(TRACING ? await launcherLog(suite, vmi) : [])]
        .filter((l) => l.msg === 'call traced');
      return { ...(JSON.parse(stdout) as PauseProbeResult), traced, pss: await podPss(suite, name) };
    } finally {
      await suite.kubectl(['delete', 'vmi', name, '--wait=false']);
      await suite.waitForGone(name, TIMEOUT_MS);
      await suite.waitForPodsGone(vmi, TIMEOUT_MS);
    }
  } finally {
    await raw.close();
  }
}

async function main(): Promise<void> {
  // A part given 0 is left out (`0 0 60`: pause+unpause alone).
  const [samples = 5, many = 20, iterations = 30] = process.argv.slice(2).map(Number);
  const guest = guestImage();
  const suite = await VmiSuite.start();
  try {
    // A first start warms the page cache and the node's caches; it is not counted.
    await oneStart(suite, 'stage-warm');
    // Each floor is taken next to what it is compared with (the stack idle meanwhile), so that
    // both see the same load on a shared machine. Each part prints as soon as it is done.
    if (samples > 0) await single(suite, guest, samples);
    if (many > 0) await atOnce(suite, guest, many);
    if (iterations > 0) await pauses(suite, iterations);
  } finally {
    await suite.close();
  }
}

async function single(suite: VmiSuite, guest: GuestImage, samples: number): Promise<void> {
  const floorOne: number[] = [];
  const runs: number[][] = [];
  for (let i = 0; i < samples; i++) {
    floorOne.push(...(await floor(guest, 1)).running);
    runs.push(await oneStart(suite, `stage-${i}`));
  }
  console.log(`One VMI at a time, ${samples} samples (median; ms after the launcher pod was created):`);
  printStages(runs);
  const scheduled = STAGES.findIndex((s) => s.label === 'Scheduled seen');
  const scheduledToRunning = median(runs.map((r) => (r[STAGES.length - 1] ?? Number.NaN) - (r[scheduled] ?? Number.NaN)));
  const podToRunning = median(runs.map((r) => r[STAGES.length - 1] ?? Number.NaN));
  const f1 = median(floorOne);
  console.log(`\n  floor: define+start of one domain through @podvirt/libvirt   ${ms(f1)} ms (median of ${samples})`);
  console.log(`  Scheduled → Running                    ${ms(scheduledToRunning)} ms   ×${(scheduledToRunning / f1).toFixed(2)} the floor (aim ≤ 1.5)`);
  console.log(`  pod created → Running                  ${ms(podToRunning)} ms   ×${(podToRunning / f1).toFixed(2)} the floor\n`);
}

async function atOnce(suite: VmiSuite, guest: GuestImage, many: number): Promise<void> {
  const floorMany = (await floor(guest, many)).running;
  const { totals, runs: manyRuns } = await concurrent(suite, many);
  const p50 = median(totals);
  const f20 = median(floorMany);
  console.log(`${many} VMIs created at once: create → Running P50 ${ms(p50)} ms, P95 ${ms(pct([...totals].sort((a, b) => a - b), 95))} ms`);
  console.log(`  floor: ${many} domains defined+started at once, P50 ${ms(f20)} ms   ratio ×${(p50 / f20).toFixed(2)} (aim ≤ 2.5)`);
  console.log(`  their stages (median over the ${many}; ms after each one's pod was created):`);
  printStages(manyRuns);
  // How long each launcher, once ready, waited for the handler's Sync: a handler that runs
  // fewer Syncs at once than VMIs start shows as a second group that waits for the first.
  const ready = STAGES.findIndex((s) => s.label === 'launcher socket ready');
  const synced = STAGES.findIndex((s) => s.label === 'Sync received');
  const waits = manyRuns.map((r) => Math.round((r[synced] ?? Number.NaN) - (r[ready] ?? Number.NaN))).sort((a, b) => a - b);
  console.log(`  launcher ready → Sync received, each: ${waits.join(' ')} ms\n`);
}

async function pauses(suite: VmiSuite, iterations: number): Promise<void> {
  const { viaApi, viaLauncher, viaLauncherNoStatus, raw, rawPlain, grpc, cpuMs, traced, pss } = await pauseUnpause(suite, iterations);
  const rp = pct(raw, 50);
  const ap = pct(viaApi, 50);
  const lp = pct(viaLauncher, 50);
  console.log(`pause+unpause, ${viaApi.length} iterations after ${WARMUP} warm-up, in turns with the floor: node API P50 ${ap.toFixed(2)} ms, raw libvirt suspend+resume P50 ${rp.toFixed(2)} ms   ×${(ap / rp).toFixed(2)} (aim ≤ 2)`);
  console.log(`  of which the launcher's cmd calls alone (pause+unpause on its socket): P50 ${lp.toFixed(2)} ms   ×${(lp / rp).toFixed(2)} (aim ≤ 1.5)`);
  console.log(`  the same with the handler stopped for each pair (no status work follows the answers): P50 ${pct(viaLauncherNoStatus, 50).toFixed(2)} ms   ×${(pct(viaLauncherNoStatus, 50) / rp).toFixed(2)}`);
  console.log(`  two gRPC round trips to the launcher without libvirt (GetDomain twice): P50 ${pct(grpc, 50).toFixed(2)} ms`);
  console.log(`  the floor is the launcher's own domain XML; the testbed's plain guest XML (raw disk, cache none) on the same daemon: P50 ${pct(rawPlain, 50).toFixed(2)} ms`);
  // The CPU each process used per pair: what a pause and an unpause set off, on the same cores.
  const pairs = viaApi.length;
  const roles = [...new Set(Object.values(cpuMs).flatMap((c) => Object.keys(c)))];
  console.log(`  CPU per pair (ms, user + system, in 10 ms ticks over the ${pairs} pairs):  ${roles.join(' / ')}`);
  for (const [series, used] of Object.entries(cpuMs)) {
    console.log(`    ${series.padEnd(20)} ${roles.map((r) => ((used[r] ?? 0) / pairs).toFixed(1)).join(' / ')}`);
  }
  if (TRACING) printTraces(traced);
  const split = (of: keyof Memory): void => {
    const mib = (role: string): string => `${((pss.get(role)?.[of] ?? 0) / 1024).toFixed(1)} MiB`;
    const overhead = ['monitor', 'launcher', 'daemon'].reduce((sum, role) => sum + (pss.get(role)?.[of] ?? 0), 0) / 1024;
    const others = [...pss.keys()].filter((r) => !['monitor', 'launcher', 'daemon', 'qemu'].includes(r));
    const what = of === 'pss' ? 'PSS' : 'private (its own pages: what another VM adds however many share the rest)';
    console.log(`per-VM overhead of that running VMI, ${what}: monitor ${mib('monitor')} + launcher ${mib('launcher')} + libvirt daemon ${mib('daemon')} = ${overhead.toFixed(1)} MiB${of === 'pss' ? ' (aim ≤ 30)' : ''}; qemu ${mib('qemu')}${others.map((r) => `; ${r} ${mib(r)}`).join('')}`);
  };
  split('pss');
  split('private');
}

/** KiB from smaps_rollup: PSS, and the pages no other process maps (Private_Clean + Private_Dirty). */
interface Memory {
  readonly pss: number;
  readonly private: number;
}

/**
 * The PSS and private memory (smaps_rollup, KiB) of a running VMI's pod processes by role: the monitor (qemu's
 * parent: it is the pod's subreaper), the launcher, the libvirt daemon, qemu, any other by name.
 */
async function podPss(suite: VmiSuite, name: string): Promise<Map<string, Memory>> {
  const roles = new Map<string, Memory>();
  for (const { role, pid } of await podProcesses(suite, name)) {
    const m = await memoryRollup(pid).catch(() => ({} as Record<string, number>));
    const was = roles.get(role) ?? { pss: 0, private: 0 };
    roles.set(role, { pss: was.pss + (m['Pss'] ?? 0), private: was.private + (m['Private_Clean'] ?? 0) + (m['Private_Dirty'] ?? 0) });
  }
  return roles;
}

/** SIGCONT, for a process that may have exited meanwhile (then there is nothing to continue). */
function continueProcess(pid: number): void {
  try {
    process.kill(pid, 'SIGCONT');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
  }
}

/** The launcher and its libvirt daemon of a VMI's pod, by role. */
async function podPids(suite: VmiSuite, name: string): Promise<Record<string, number>> {
  const found = await podProcesses(suite, name);
  const pid = (role: string): number => {
    const p = found.find((f) => f.role === role);
    if (p === undefined) throw new Error(`no ${role} process found for ${name}`);
    return p.pid;
  };
  return { launcher: pid('launcher'), daemon: pid('daemon') };
}

/**
 * The processes of a VMI's pod, each with its role: its monitor (qemu's parent, its subreaper)
 * and every live process under it — the launcher, the libvirt daemon, qemu, any other by name.
 */
async function podProcesses(suite: VmiSuite, name: string): Promise<{ role: string; pid: number }[]> {
  const [qemu] = await suite.qemuPids(name);
  const monitor = qemu === undefined ? undefined : await parentOf(qemu);
  if (monitor === undefined) throw new Error(`no qemu or no monitor found for ${name}`);
  const role = (p: ProcStat): string =>
    /^qemu/.test(p.comm) ? 'qemu' : p.comm === 'libvirtd' || p.comm === 'virtqemud' ? 'daemon' : p.ppid === monitor && p.comm === 'node' ? 'launcher' : p.comm;
  const out = [{ role: 'monitor', pid: monitor }];
  let level = [monitor];
  while (level.length > 0) {
    const children = (await Promise.all(level.map((pid) => childrenOf(pid)))).flat().filter((p) => p.state !== 'Z');
    out.push(...children.map((p) => ({ role: role(p), pid: p.pid })));
    level = children.map((p) => p.pid);
  }
  return out;
}

/** PODVIRT_TRACE_OPS=1: the handler and the launcher log each call's steps (proto/src/op-trace.ts). */
const TRACING = process.env['PODVIRT_TRACE_OPS'] === '1';

/** Each traced method's steps: the median of each step's end (ms after the call reached the server) and the step. */
function printTraces(traced: readonly LogLine[]): void {
  const calls = ['Pause', 'pause', 'Unpause', 'unpause'];
  for (const call of calls) {
    const runs = traced.filter((l) => l['call'] === call).map((l) => l['steps'] as { step: string; ms: number }[]);
    if (runs.length === 0) continue;
    const where = /^[A-Z]/.test(call) ? 'handler, node API' : 'launcher, cmd socket';
    console.log(`  ${call} (${where}), median of ${runs.length} traced calls, ms after the call reached the server:`);
    let previous = 0;
    for (const [i, { step }] of (runs[0] ?? []).entries()) {
      const at = pct(runs.map((r) => r[i]?.ms ?? Number.NaN).sort((a, b) => a - b), 50);
      console.log(`    ${step.padEnd(28)} ${at.toFixed(3).padStart(8)} ${(at - previous).toFixed(3).padStart(8)}`);
      previous = at;
    }
  }
}

await main();
