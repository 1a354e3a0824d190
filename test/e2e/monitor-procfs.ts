// What the monitor e2e tests observe from outside, through the host's procfs: a process's
// state and parent, the monitor's children, zombies among them over time, and memory.
import { readdir, readFile } from 'node:fs/promises';

export interface ProcStat {
  readonly pid: number;
  readonly comm: string;
  /** R, S, D, Z … as in proc(5). */
  readonly state: string;
  readonly ppid: number;
  /** Clock ticks since boot: with the pid, it names one process across pid reuse. */
  readonly startTime: number;
}

export async function procStat(pid: number): Promise<ProcStat | undefined> {
  let text: string;
  try {
    text = await readFile(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // comm may hold spaces and parentheses: it ends at the last ')'.
  const close = text.lastIndexOf(')');
  const rest = text.slice(close + 2).split(' ');
  return { pid, comm: text.slice(text.indexOf('(') + 1, close), state: rest[0] ?? '?', ppid: Number(rest[1]), startTime: Number(rest[19]) };
}

/** Every process whose parent is `ppid`, found by scanning /proc/<pid>/stat (zombies included). */
export async function childrenOf(ppid: number): Promise<ProcStat[]> {
  const pids = (await readdir('/proc')).filter((name) => /^\d+$/.test(name)).map(Number);
  const stats = await Promise.all(pids.map(procStat));
  return stats.filter((s): s is ProcStat => s !== undefined && s.ppid === ppid);
}

/** `PPid:` from /proc/<pid>/status, as the brief's check reads it. */
export async function parentOf(pid: number): Promise<number | undefined> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  const match = /^PPid:\s+(\d+)$/m.exec(status);
  return match === null ? undefined : Number(match[1]);
}

/** The same process (pid and start time) still exists in any state, zombie included. */
export async function exists(proc: ProcStat): Promise<boolean> {
  return (await procStat(proc.pid))?.startTime === proc.startTime;
}

export interface ZombieSighting {
  readonly pid: number;
  readonly comm: string;
  /** How long it was seen as a zombie: from the first to the last sample that showed it. */
  readonly seenMs: number;
  readonly samples: number;
}

export interface ZombieReport {
  readonly samples: number;
  /** The most zombies among the monitor's children in one sample. */
  readonly maxAtOnce: number;
  readonly sightings: readonly ZombieSighting[];
  /** Distinct children seen at all (any state), by comm: the burst the monitor had to reap. */
  readonly childrenSeen: ReadonlyMap<string, number>;
}

/**
 * Samples the monitor's children every `intervalMs` until `stop()`, recording every zombie
 * (by pid and start time) and how long it stayed one. One sample at a time: a slow scan on a
 * busy machine delays the next instead of piling up.
 */
export function sampleZombies(monitorPid: number, intervalMs: number): { stop: () => Promise<ZombieReport> } {
  const zombies = new Map<string, { pid: number; comm: string; first: number; last: number; samples: number }>();
  const children = new Map<string, string>();
  let samples = 0;
  let maxAtOnce = 0;
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const now = Date.now();
      const seen = await childrenOf(monitorPid);
      samples++;
      let count = 0;
      for (const child of seen) {
        const key = `${child.pid}@${child.startTime}`;
        children.set(key, child.comm);
        if (child.state !== 'Z') continue;
        count++;
        const z = zombies.get(key) ?? { pid: child.pid, comm: child.comm, first: now, last: now, samples: 0 };
        z.last = now;
        z.samples++;
        zombies.set(key, z);
      }
      maxAtOnce = Math.max(maxAtOnce, count);
      await new Promise((r) => setTimeout(r, intervalMs));
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      await loop;
      const byComm = new Map<string, number>();
      for (const comm of children.values()) byComm.set(comm, (byComm.get(comm) ?? 0) + 1);
      const sightings = [...zombies.values()].map((z) => ({ pid: z.pid, comm: z.comm, seenMs: z.last - z.first, samples: z.samples }));
      return { samples, maxAtOnce, sightings, childrenSeen: byComm };
    },
  };
}

// A zombie lives from its exit until the monitor's SIGCHLD handler runs: microseconds when
// idle, more on a loaded machine. The tests set the safety sweep to 10 minutes, so a zombie
// still there after 2 s was missed by SIGCHLD (and would stay until that sweep).
const LINGER_MS = 2_000;

/** Zombies that stayed long enough to say the monitor did not reap them on SIGCHLD. */
export function lingeringZombies(report: ZombieReport): ZombieSighting[] {
  return report.sightings.filter((z) => z.seenMs >= LINGER_MS);
}

/** `Rss` and `Pss` (and the rest) of /proc/<pid>/smaps_rollup, in KiB. */
export async function memoryRollup(pid: number): Promise<Record<string, number>> {
  const text = await readFile(`/proc/${pid}/smaps_rollup`, 'utf8');
  const out: Record<string, number> = {};
  for (const match of text.matchAll(/^(\w+):\s+(\d+) kB$/gm)) out[match[1] ?? ''] = Number(match[2]);
  return out;
}

/** utime + stime of a process, in clock ticks. */
export async function cpuTicks(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

/** The pid as seen inside the process's own (innermost) PID namespace, from NSpid. */
export async function namespacePid(pid: number): Promise<number | undefined> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => undefined);
  const nspid = status?.match(/^NSpid:\s+(.+)$/m)?.[1]?.trim().split(/\s+/);
  return nspid === undefined ? undefined : Number(nspid[nspid.length - 1]);
}
