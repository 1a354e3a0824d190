import { MonitorError } from './monitor-error.js';
import type { ChildExit, NativeBinding } from './native-binding.js';
import type { ProcessTree } from './process-tree.js';

export interface ReapedChild extends ChildExit {
  /** Read from the zombie before reaping it; undefined if procfs had nothing. */
  readonly comm: string | undefined;
}

export interface ReaperOptions {
  readonly binding: NativeBinding;
  readonly tree: Pick<ProcessTree, 'children' | 'stat'>;
  /** True for children Node spawned itself: libuv waits for those by pid and needs their status. */
  readonly isOwned: (pid: number) => boolean;
}

/**
 * Reaps the children nobody else waits for (orphans re-parented to us, qemu included) without
 * ever collecting one that libuv owns. SIGCHLD signals coalesce, so one sweep keeps going
 * until no reapable child is left.
 */
export class Reaper {
  readonly #binding: NativeBinding;
  readonly #tree: Pick<ProcessTree, 'children' | 'stat'>;
  readonly #isOwned: (pid: number) => boolean;

  constructor(options: ReaperOptions) {
    this.#binding = options.binding;
    this.#tree = options.tree;
    this.#isOwned = options.isOwned;
  }

  /** Makes orphaned descendants re-parent to this process instead of to PID 1. */
  setChildSubreaper(): void {
    try {
      this.#binding.setChildSubreaper();
    } catch (err) {
      throw new MonitorError('MONITOR_ERR_NATIVE', 'cannot become a child subreaper', { cause: err });
    }
  }

  isChildSubreaper(): boolean {
    return this.#binding.isChildSubreaper();
  }

  sweep(): ReapedChild[] {
    const reaped: ReapedChild[] = [];
    for (;;) {
      // A cheap first look: usually nothing has exited, or the first exited child is an orphan.
      const first = this.#binding.peekExited();
      if (first === undefined) break;
      if (!this.#isOwned(first.pid)) {
        if (this.#reapOne(first.pid, reaped)) continue;
        break; // someone else collected it between the peek and the reap
      }
      // The first waitable child is libuv's and stays a zombie until libuv collects it;
      // waitid(P_ALL) would keep returning it, so look at every child by pid instead.
      let progressed = false;
      for (const pid of this.#tree.children('self')) {
        if (this.#isOwned(pid) || this.#binding.peekExited(pid) === undefined) continue;
        progressed = this.#reapOne(pid, reaped) || progressed;
      }
      if (!progressed) break;
    }
    return reaped;
  }

  #reapOne(pid: number, reaped: ReapedChild[]): boolean {
    const comm = this.#tree.stat(pid)?.comm;
    const exit = this.#binding.reap(pid);
    if (exit === undefined) return false;
    reaped.push({ ...exit, comm });
    return true;
  }
}
