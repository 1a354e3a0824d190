import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';

export interface ProcessStat {
  readonly pid: number;
  /** The executable's name as the kernel keeps it: at most 15 characters. */
  readonly comm: string;
  /** R, S, D, Z, T … as in proc(5). */
  readonly state: string;
  readonly ppid: number;
  /** Clock ticks since boot: together with the pid it names one process across pid reuse. */
  readonly startTime: number;
}

type Pid = number | 'self';

/**
 * Read-only view of the process tree through procfs. Children come from
 * `/proc/<pid>/task/<tid>/children` (one file per thread, because an orphan is re-parented to
 * one thread of its reaper); kernels built without CONFIG_PROC_CHILDREN fall back to a scan
 * of every `/proc/<pid>/stat`.
 */
export class ProcessTree {
  readonly #procRoot: string;

  constructor(procRoot = '/proc') {
    this.#procRoot = procRoot;
  }

  children(pid: Pid): number[] {
    const taskDir = join(this.#procRoot, String(pid), 'task');
    let tids: string[];
    try {
      tids = readdirSync(taskDir);
    } catch {
      return []; // the process is gone
    }
    const children = new Set<number>();
    for (const tid of tids) {
      let text: string;
      try {
        text = readFileSync(join(taskDir, tid, 'children'), 'utf8');
      } catch (err) {
        if (isMissingChildrenFile(err, tid, taskDir)) return this.#scanChildren(pid);
        continue; // the thread ended meanwhile
      }
      for (const word of text.split(' ')) if (word !== '' && word !== '\n') children.add(Number(word));
    }
    return [...children];
  }

  /** Every descendant, parents before their children. */
  descendants(pid: Pid): number[] {
    const result: number[] = [];
    const queue = this.children(pid);
    for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
      result.push(next);
      queue.push(...this.children(next));
    }
    return result;
  }

  stat(pid: number): ProcessStat | undefined {
    let text: string;
    try {
      text = readFileSync(join(this.#procRoot, String(pid), 'stat'), 'utf8');
    } catch {
      return undefined;
    }
    // comm may itself contain spaces and parentheses: it ends at the last ')'.
    const open = text.indexOf('(');
    const close = text.lastIndexOf(')');
    if (open < 0 || close < open) return undefined;
    const rest = text.slice(close + 2).split(' ');
    return {
      pid,
      comm: text.slice(open + 1, close),
      state: rest[0] ?? '?',
      ppid: Number(rest[1]),
      startTime: Number(rest[19]),
    };
  }

  #scanChildren(pid: Pid): number[] {
    const parent = pid === 'self' ? Number(readlinkSync(join(this.#procRoot, 'self'))) : pid;
    const children: number[] = [];
    for (const name of readdirSync(this.#procRoot)) {
      if (!/^\d+$/.test(name)) continue;
      if (this.stat(Number(name))?.ppid === parent) children.push(Number(name));
    }
    return children;
  }
}

function isMissingChildrenFile(err: unknown, tid: string, taskDir: string): boolean {
  if ((err as NodeJS.ErrnoException).code !== 'ENOENT') return false;
  try {
    readdirSync(join(taskDir, tid));
    return true; // the thread exists, so the kernel simply has no children file
  } catch {
    return false;
  }
}
