import { eventually, EventuallyTimeoutError } from '@podvirt/test-support';
import { ContainerError } from './container-error.js';
import { processesInMountNamespace } from './mount-namespace.js';

export interface KillNamespaceOptions {
  /** Between SIGTERM and SIGKILL (qemu exits on SIGTERM within ~40 ms). */
  readonly graceMs: number;
  /** After SIGKILL, how long until the processes must be gone. */
  readonly timeoutMs: number;
}

const POLL_MS = 50;

function signalAll(pids: readonly number[], signal: NodeJS.Signals): void {
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
    } catch {
      // Already gone.
    }
  }
}

/** The processes still in `ns` once none are, or at the end of `ms`. */
async function waitGone(ns: string, ms: number): Promise<number[]> {
  let left: number[] = [];
  try {
    await eventually(async () => (left = await processesInMountNamespace(ns)).length === 0, { what: `processes in ${ns} gone`, deadlineMs: ms, stepMs: POLL_MS });
  } catch (err) {
    if (!(err instanceof EventuallyTimeoutError)) throw err;
  }
  return left;
}

/**
 * Ends every process left in mount namespace `ns` (daemonized children such as qemu, which
 * outlive the container's main process): SIGTERM, then SIGKILL after the grace. Resolves
 * with the pids it signalled; rejects if some are still alive after the timeout.
 */
export async function killNamespaceProcesses(ns: string, opts: KillNamespaceOptions): Promise<number[]> {
  const found = await processesInMountNamespace(ns);
  if (found.length === 0) return [];
  signalAll(found, 'SIGTERM');
  const stubborn = await waitGone(ns, opts.graceMs);
  if (stubborn.length === 0) return found;
  signalAll(stubborn, 'SIGKILL');
  const left = await waitGone(ns, opts.timeoutMs);
  if (left.length > 0) {
    throw new ContainerError('PODVIRT_CONTAINER_LEFTOVERS', `processes ${left.join(', ')} in ${ns} survived SIGKILL`);
  }
  return [...new Set([...found, ...stubborn])];
}
