// How the demos wait for what a user would look at: the shared eventually, every 250 ms, within a
// bound; a probe that throws (a guest not answering yet) is a miss, and `signal` stops the wait.
import { eventually } from '@podvirt/test-support';

export function until<T>(what: string, probe: () => Promise<T | undefined>, deadlineMs: number, signal?: AbortSignal): Promise<T> {
  return eventually(() => {
    if (signal?.aborted === true) throw new Error(`${what}: stopped`);
    return probe().catch(() => undefined);
  }, { what, deadlineMs, stepMs: 250 });
}
