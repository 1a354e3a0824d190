// What the benches read of a pod's memory on this cgroup v1 host: the memory cgroup a process is
// in, every pid of a group and the groups below it, a process's PSS and RSS.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

export const MEMORY_ROOT = '/sys/fs/cgroup/memory';

/** The memory cgroup (relative to the hierarchy) a process is in. */
export async function memoryGroup(pid: number): Promise<string> {
  const line = (await readFile(`/proc/${pid}/cgroup`, 'utf8')).split('\n').find((l) => /^\d+:memory:/.test(l));
  return line?.replace(/^\d+:memory:/, '') ?? '';
}

/** Every pid in a group and the groups below it. */
export async function pidsIn(dir: string): Promise<number[]> {
  const own = (await readFile(join(dir, 'cgroup.procs'), 'utf8').catch(() => '')).split('\n').filter((l) => l !== '').map(Number);
  const subs = (await readdir(dir, { withFileTypes: true }).catch(() => [])).filter((e) => e.isDirectory());
  return [...own, ...(await Promise.all(subs.map((s) => pidsIn(join(dir, s.name))))).flat()];
}

export async function pssKib(pid: number): Promise<number> {
  const text = await readFile(`/proc/${pid}/smaps_rollup`, 'utf8').catch(() => '');
  return Number(/^Pss:\s+(\d+) kB$/m.exec(text)?.[1] ?? '0');
}

export async function rssKib(pid: number): Promise<number> {
  const text = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  return Number(/^VmRSS:\s+(\d+) kB$/m.exec(text)?.[1] ?? '0');
}

/** The sum of `per` over every process of the memory groups, in MiB. */
export async function sumMib(groups: readonly string[], per: (pid: number) => Promise<number>): Promise<number> {
  const pids = [...new Set((await Promise.all(groups.map((g) => pidsIn(g)))).flat())];
  return (await Promise.all(pids.map((p) => per(p)))).reduce((a, b) => a + b, 0) / 1024;
}
