// Timing helpers the benchmarks share: warm up, then time each call of an operation.

export const WARMUP = 5;

/** Runs `op` WARMUP times untimed, then `n` times timed; the durations in ms, ascending. */
export async function sample(n: number, op: () => Promise<unknown>): Promise<number[]> {
  for (let i = 0; i < WARMUP; i++) await op();
  return timeEach(n, op);
}

/** Runs `op` `n` times, timing each; the durations in ms, ascending. */
export async function timeEach(n: number, op: () => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const at = performance.now();
    await op();
    out.push(performance.now() - at);
  }
  return out.sort((a, b) => a - b);
}

/** The p-th percentile of ascending values (nearest rank). */
export const pct = (sorted: readonly number[], p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
