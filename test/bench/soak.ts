// Soak: N VMs on the testbed for M minutes under random faults — handler SIGKILL + restart,
// handler stalls (SIGSTOP past its watchdog, then SIGCONT), launcher SIGKILL, libvirt daemon
// SIGKILL, pause/unpause through the node API, and API watches dropped by the server. Reports
// VMs lost (a VM a fault must not end, ended: must be 0), VMIs stuck (not final within a bound
// after their launcher was killed, or not gone after a delete: must be 0), VMI writes (status
// included) per VMI per minute, and the handler's RSS over time. A launcher kill ends its VM by
// design; that VMI is deleted and replaced. Asserts nothing about time; exits 1 when a VM was
// lost or a VMI stuck.
//
//   node test/dist/bench/soak.js [vms] [minutes] [seed]        (default 3 VMs, 3 minutes)
import { readdir, readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import type { VirtualMachineInstance } from '@podvirt/api';
import { nodeApiSocket, podvirtctl } from '../e2e/handler-node.js';
import { guestVmi, NS, VmiSuite } from '../e2e/vmi-stack.js';

const WATCHDOG_S = 6;
const STUCK_BOUND_MS = 90_000;

type Fault = 'handler-kill' | 'handler-stall' | 'launcher-kill' | 'libvirt-kill' | 'pause' | 'drop-watches';
const FAULTS: readonly Fault[] = ['handler-kill', 'handler-stall', 'launcher-kill', 'libvirt-kill', 'pause', 'drop-watches'];

/** A small seeded generator, so a run that found something can be repeated. */
function random(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 2 ** 32;
  };
}

async function rssMiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  return Number(/^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1] ?? NaN) / 1024;
}

/** Host pids whose argv matches, among the processes of a VMI's pod (found by its UID on the command line). */
async function pidsOf(match: (argv: string[]) => boolean): Promise<number[]> {
  const found: number[] = [];
  for (const pid of await readdir('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    const argv = (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).split('\0');
    if (match(argv)) found.push(Number(pid));
  }
  return found;
}

async function launcherPid(uid: string): Promise<number | undefined> {
  const [pid] = await pidsOf((argv) => argv.some((a) => a.endsWith('podvirt-launcher.js')) && argv[argv.indexOf('--uid') + 1] === uid);
  return pid;
}

/** The pod's libvirt daemon: a child of the launcher. */
async function libvirtPid(launcher: number): Promise<number | undefined> {
  const children = (await readFile(`/proc/${launcher}/task/${launcher}/children`, 'utf8').catch(() => '')).trim().split(/\s+/).filter(Boolean);
  for (const child of children) {
    const argv = (await readFile(`/proc/${child}/cmdline`, 'utf8').catch(() => '')).split('\0');
    if (/virtqemud|libvirtd/.test(argv[0] ?? '')) return Number(child);
  }
  return undefined;
}

async function main(): Promise<number> {
  const vms = Number(process.argv[2] ?? 3);
  const minutes = Number(process.argv[3] ?? 3);
  const seed = Number(process.argv[4] ?? Date.now() % 100_000);
  const next = random(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T;
  console.log(`soak: ${vms} VMs, ${minutes} min, seed ${seed}`);

  const suite = await VmiSuite.start({ handlerArgs: [`--watchdog-timeout=${WATCHDOG_S}s`] });
  let lost = 0;
  let stuck = 0;
  let generation = 0;
  const wanted = new Map<string, { uid: string; qemu: number[] }>();
  const rss: string[] = [];
  const faults: string[] = [];
  const startVm = async (): Promise<void> => {
    const name = `soak-${generation++}`;
    await suite.apply(guestVmi(suite.guest, name));
    const vmi = await suite.waitForPhase(name, 'Running');
    wanted.set(name, { uid: vmi.metadata.uid ?? '', qemu: await suite.qemuPids(name) });
  };
  const check = async (): Promise<void> => {
    for (const [name, want] of wanted) {
      const vmi = await suite.vmi(name);
      const qemu = await suite.qemuPids(name);
      if (vmi?.status?.phase !== 'Running' || qemu.join() !== want.qemu.join()) {
        lost++;
        console.log(`LOST ${name}: phase ${vmi?.status?.phase ?? 'gone'}, qemu ${want.qemu.join()} → ${qemu.join() || 'none'}`);
        wanted.delete(name);
        await replace(name, vmi);
      }
    }
  };
  const replace = async (name: string, vmi: VirtualMachineInstance | undefined): Promise<void> => {
    await suite.kubectl(['delete', 'vmi', name, '--wait=false']);
    try {
      await suite.waitForGone(name, STUCK_BOUND_MS);
    } catch {
      stuck++;
      console.log(`STUCK ${name}: not gone ${STUCK_BOUND_MS} ms after its delete (phase ${vmi?.status?.phase ?? '?'})`);
    }
    await startVm();
  };

  try {
    for (let i = 0; i < vms; i++) await startVm();
    const started = Date.now();
    const writesAtStart = new Map([...wanted.keys()].map((n) => [n, suite.versionsSeen(n)]));
    while (Date.now() - started < minutes * 60_000) {
      const fault = pick(FAULTS);
      const [victim] = [...wanted.keys()].sort(() => next() - 0.5);
      const handler = suite.stack.handler;
      faults.push(fault);
      switch (fault) {
        case 'handler-kill':
          handler.kill('SIGKILL');
          await suite.stack.restartHandler();
          break;
        case 'handler-stall':
          handler.kill('SIGSTOP');
          await sleep((WATCHDOG_S + 1 + next() * WATCHDOG_S) * 1000);
          handler.kill('SIGCONT');
          break;
        case 'pause':
          if (victim !== undefined) {
            await podvirtctl(nodeApiSocket(suite.stack), 'pause', `${NS}/${victim}`);
            await podvirtctl(nodeApiSocket(suite.stack), 'unpause', `${NS}/${victim}`);
          }
          break;
        case 'drop-watches': {
          // The soak runs on the in-repo API server, the one that can drop its watches on demand.
          const api = suite.stack.testbed.apiServer;
          if (api === undefined) throw new Error('the soak\'s drop-watches fault needs the in-repo API server');
          api.dropWatches({ abrupt: next() < 0.5 });
          break;
        }
        case 'libvirt-kill': {
          const launcher = victim === undefined ? undefined : await launcherPid(wanted.get(victim)?.uid ?? '');
          const daemon = launcher === undefined ? undefined : await libvirtPid(launcher);
          if (daemon !== undefined) process.kill(daemon, 'SIGKILL');
          break;
        }
        case 'launcher-kill': {
          if (victim === undefined) break;
          const want = wanted.get(victim);
          const pid = await launcherPid(want?.uid ?? '');
          if (pid === undefined) break;
          wanted.delete(victim);
          process.kill(pid, 'SIGKILL');
          const killedAt = Date.now();
          try {
            await suite.eventually(`${victim} Failed`, async () => ((await suite.vmi(victim))?.status?.phase === 'Failed' ? true : undefined), STUCK_BOUND_MS);
            faults.push(`  ${victim} Failed ${Date.now() - killedAt} ms after its launcher was killed`);
          } catch {
            stuck++;
            console.log(`STUCK ${victim}: not Failed ${STUCK_BOUND_MS} ms after its launcher was killed`);
          }
          await replace(victim, await suite.vmi(victim));
          break;
        }
      }
      // Let the system settle past one watchdog period before judging it.
      await sleep((WATCHDOG_S + 2) * 1000);
      await check();
      rss.push(`${Math.round((Date.now() - started) / 1000)} s: ${(await rssMiB(suite.stack.handler.pid)).toFixed(1)} MiB`);
    }
    const elapsedMin = (Date.now() - started) / 60_000;
    const perVmi = [...writesAtStart].map(([name, before]) => ({ name, perMin: (suite.versionsSeen(name) - before) / elapsedMin }));
    console.log(`faults: ${faults.join(', ')}`);
    console.log(`VMs lost: ${lost} (must be 0)`);
    console.log(`VMIs stuck: ${stuck} (must be 0)`);
    for (const { name, perMin } of perVmi) console.log(`VMI writes per minute, ${name}: ${perMin.toFixed(1)}`);
    console.log(`handler RSS over time: ${rss.join('; ')}`);
    return lost === 0 && stuck === 0 ? 0 : 1;
  } finally {
    await suite.kubectl(['delete', 'vmi', '--all', '--wait=false']);
    for (const name of wanted.keys()) await suite.waitForGone(name).catch(() => undefined);
    await suite.close();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
