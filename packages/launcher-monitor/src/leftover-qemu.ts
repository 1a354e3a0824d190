import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from './json-logger.js';
import type { ProcessStat, ProcessTree } from './process-tree.js';

/** `none`: no qemu was left; `terminated`: SIGTERM sufficed; `killed`: SIGKILL was needed; `survived`: even SIGKILL did not end it in time. */
export type QemuStopResult = 'none' | 'terminated' | 'killed' | 'survived';

export interface StopLeftoverQemuOptions {
  readonly tree: Pick<ProcessTree, 'descendants' | 'stat'>;
  readonly kill: (pid: number, signal: NodeJS.Signals) => void;
  readonly log: Logger;
  /** How long qemu gets between SIGTERM and SIGKILL. */
  readonly timeoutMs: number;
  /** How long a SIGKILLed qemu gets to disappear (it may be stuck in uninterruptible I/O). */
  readonly killTimeoutMs?: number;
  readonly pollIntervalMs?: number;
}

// The kernel keeps 15 characters of the executable's name: `qemu-system-x86_64` reads
// `qemu-system-x86`, and distributions that ship a `qemu-kvm` binary name it so.
const QEMU_COMM = /^(qemu-system|qemu-kvm)/;

/**
 * Stops any qemu still running below the monitor after the launcher is gone. libvirt
 * double-forks qemu, so it is normally a direct child of the monitor (the subreaper); the
 * whole subtree is searched in case a launcher died before qemu was daemonized. qemu exits
 * at once on SIGTERM (no guest shutdown: the launcher's grace period is over by now), so
 * waiting for it is only about a qemu stuck in the kernel.
 */
export async function stopLeftoverQemu(options: StopLeftoverQemuOptions): Promise<QemuStopResult> {
  const { tree, kill, log } = options;
  const pollMs = options.pollIntervalMs ?? 50;
  const targets = tree
    .descendants('self')
    .map((pid) => tree.stat(pid))
    .filter((stat): stat is ProcessStat => stat !== undefined && stat.state !== 'Z' && QEMU_COMM.test(stat.comm));
  if (targets.length === 0) return 'none';

  log.info({ pids: targets.map((t) => t.pid), timeoutMs: options.timeoutMs }, 'terminating leftover qemu');
  signalAll(targets, 'SIGTERM', kill);
  let alive = await waitGone(tree, targets, options.timeoutMs, pollMs);
  if (alive.length === 0) return 'terminated';

  log.warn({ pids: alive.map((t) => t.pid), timeoutMs: options.timeoutMs }, 'qemu ignored SIGTERM, killing it');
  signalAll(alive, 'SIGKILL', kill);
  alive = await waitGone(tree, alive, options.killTimeoutMs ?? 2_000, pollMs);
  if (alive.length === 0) return 'killed';
  log.error({ pids: alive.map((t) => t.pid) }, 'qemu survived SIGKILL');
  return 'survived';
}

function signalAll(targets: readonly ProcessStat[], signal: NodeJS.Signals, kill: StopLeftoverQemuOptions['kill']): void {
  for (const target of targets) {
    try {
      kill(target.pid, signal);
    } catch {
      // ESRCH: it exited on its own in the meantime, which is what we want
    }
  }
}

async function waitGone(
  tree: Pick<ProcessTree, 'stat'>,
  targets: readonly ProcessStat[],
  timeoutMs: number,
  pollMs: number,
): Promise<ProcessStat[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const alive = targets.filter((target) => isAlive(tree, target));
    if (alive.length === 0 || Date.now() >= deadline) return alive;
    // Exited qemus become zombies and the monitor's SIGCHLD handler reaps them meanwhile.
    await sleep(Math.min(pollMs, Math.max(1, deadline - Date.now())));
  }
}

function isAlive(tree: Pick<ProcessTree, 'stat'>, target: ProcessStat): boolean {
  const now = tree.stat(target.pid);
  return now !== undefined && now.startTime === target.startTime && now.state !== 'Z';
}
