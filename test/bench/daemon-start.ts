// The launcher's libvirt daemon alone: virtqemud (tools/build-virtqemud's) against Debian's
// libvirtd (the fallback, pointed at the QEMU driver module alone), in turns. Each daemon is
// started as the launcher starts it (the launcher's own startDaemon: its configs, the
// capabilities cache seeded, the supervisor waiting for the socket to accept) from a process in
// a container of its own (a mount namespace with private libvirt directories, as in a pod).
// Timed: startDaemon's call, one daemon at a time (samples) and N at once; then each daemon's
// PSS once up (idle, no domain; smaps_rollup), with all N running.
// Prints the table; asserts nothing. No VM boots, but it loads the machine: run it under the lock.
//
//   flock /tmp/podvirt-vm.lock node test/dist/bench/daemon-start.js [samples] [concurrent]
//   (default: 5 samples, 20 at once)
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { DEFAULT_LIBVIRT_DIRS, startDaemon, type DaemonChoice } from '@podvirt/launcher';
import { memoryRollup } from '../e2e/monitor-procfs.js';
import { launcherDaemon, launcherDaemonEnv, repoRoot, startContainer, type Container } from '../testbed/index.js';
import { pct } from './latency-sample.js';

interface Started {
  readonly ms: number;
  readonly pid: number;
}

/** In the container: start the daemon, print how long that took and its pid, keep it until SIGTERM. */
async function child(): Promise<void> {
  const choice = (process.env['PODVIRT_LIBVIRT_DAEMON'] ?? 'virtqemud') as DaemonChoice;
  const stop = new AbortController();
  const t0 = performance.now();
  const daemon = await startDaemon(DEFAULT_LIBVIRT_DIRS, process.env['PODVIRT_LIBVIRT_CAPS_CACHE'], pino({ level: 'silent' }), stop.signal, choice, process.env['PODVIRT_VIRTQEMUD']);
  process.stdout.write(`${JSON.stringify({ ms: performance.now() - t0, pid: daemon.supervisor.pid })}\n`);
  await new Promise((resolve) => process.once('SIGTERM', resolve));
  await daemon.supervisor.close();
}

interface Running {
  readonly started: Started;
  readonly container: Container;
  readonly dir: string;
}

async function startOne(kind: DaemonChoice): Promise<Running> {
  const dir = await mkdtemp(join(tmpdir(), 'podvirt-daemon-bench-'));
  const root = repoRoot();
  const daemon = launcherDaemon(root, { PODVIRT_TESTBED_DAEMON: kind });
  const container = await startContainer({
    command: [process.execPath, fileURLToPath(import.meta.url), '--child'],
    stateDir: join(dir, 'state'),
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', ...launcherDaemonEnv(daemon) },
  });
  const first = await new Promise<string>((resolve, reject) => {
    createInterface({ input: container.stdout }).once('line', resolve);
    void container.exited.then(() => reject(new Error(`the ${kind} bench child exited before its daemon was up`)));
  });
  return { started: JSON.parse(first) as Started, container, dir };
}

async function stopAll(running: readonly Running[]): Promise<void> {
  await Promise.all(running.map(async (r) => {
    await r.container.stop({ graceMs: 5_000 });
    await rm(r.dir, { recursive: true, force: true });
  }));
}

async function main(): Promise<void> {
  const samples = Number(process.argv[2] ?? 5);
  const concurrent = Number(process.argv[3] ?? 20);
  const kinds: DaemonChoice[] = ['virtqemud', 'libvirtd'];
  const alone = new Map<DaemonChoice, number[]>(kinds.map((k) => [k, []]));
  const pssAlone = new Map<DaemonChoice, number[]>(kinds.map((k) => [k, []]));
  for (let i = 0; i < samples; i++) {
    for (const kind of i % 2 === 0 ? kinds : [...kinds].reverse()) {
      const r = await startOne(kind);
      alone.get(kind)?.push(r.started.ms);
      pssAlone.get(kind)?.push((await memoryRollup(r.started.pid))['Pss'] ?? Number.NaN);
      await stopAll([r]);
    }
  }
  const atOnce = new Map<DaemonChoice, { ms: number[]; pss: number[] }>();
  for (const kind of kinds) {
    if (concurrent === 0) break;
    const running = await Promise.all(Array.from({ length: concurrent }, () => startOne(kind)));
    const pss = await Promise.all(running.map(async (r) => (await memoryRollup(r.started.pid))['Pss'] ?? Number.NaN));
    atOnce.set(kind, { ms: running.map((r) => r.started.ms).sort((a, b) => a - b), pss: pss.sort((a, b) => a - b) });
    await stopAll(running);
  }
  const ms = (v: number): string => `${v.toFixed(0)} ms`;
  const mib = (kib: number): string => `${(kib / 1024).toFixed(1)} MiB`;
  console.log(`| daemon | start alone (median of ${samples}) | PSS alone (median) | ${concurrent} at once: start P50 / P95 / max | PSS each at ${concurrent} (median) |`);
  console.log('|---|---|---|---|---|');
  for (const kind of kinds) {
    const a = [...(alone.get(kind) ?? [])].sort((x, y) => x - y);
    const p = [...(pssAlone.get(kind) ?? [])].sort((x, y) => x - y);
    const n = atOnce.get(kind);
    console.log(`| ${kind} | ${ms(pct(a, 50))} (${a.map((v) => v.toFixed(0)).join(', ')}) | ${mib(pct(p, 50))} | ${n === undefined ? '—' : `${ms(pct(n.ms, 50))} / ${ms(pct(n.ms, 95))} / ${ms(n.ms.at(-1) ?? Number.NaN)}`} | ${n === undefined ? '—' : mib(pct(n.pss, 50))} |`);
  }
}

if (process.argv[2] === '--child') await child();
else await main();
