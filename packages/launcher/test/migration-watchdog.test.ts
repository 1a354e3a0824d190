import assert from 'node:assert/strict';
import { test } from 'node:test';
import { judgeProgress, startWatchdog, type WatchdogLimits } from '../src/migration/migration-watchdog.js';

const T0 = 1_000_000;
const limits: WatchdogLimits = { progressTimeoutMs: 10_000, completionTimeoutMs: 60_000 };

/** Feeds (elapsed ms, data_remaining) samples; returns the verdict at each. */
function run(l: WatchdogLimits, samples: ReadonlyArray<readonly [number, number | undefined]>): string[] {
  let state = startWatchdog(T0);
  return samples.map(([at, remaining]) => {
    const v = judgeProgress(l, state, remaining, T0 + at);
    if (v.kind === 'continue') {
      state = v.state;
      return 'continue';
    }
    return v.reason;
  });
}

const rows: Array<[string, WatchdogLimits, ReadonlyArray<readonly [number, number | undefined]>, RegExp[]]> = [
  ['shrinking data keeps it going', limits, [[1000, 900], [5000, 800], [12_000, 700], [21_000, 600]], [/continue/, /continue/, /continue/, /continue/]],
  ['data that never drops below its lowest aborts after the progress timeout', limits,
    [[1000, 500], [5000, 600], [10_999, 500], [11_000, 550]], [/continue/, /continue/, /continue/, /no progress for 10 s \(progress timeout\)/]],
  ['a new lowest value restarts the progress clock', limits, [[1000, 500], [9000, 400], [18_000, 450]], [/continue/, /continue/, /continue/]],
  ['no statistics yet counts from the start', limits, [[5000, undefined], [10_000, undefined]], [/continue/, /progress timeout/]],
  ['the completion timeout ends even a progressing migration', limits, [[30_000, 100], [59_000, 50], [60_000, 10]], [/continue/, /continue/, /within 60 s \(completion timeout\)/]],
  ['zero limits never abort', { progressTimeoutMs: 0, completionTimeoutMs: 0 }, [[1_000_000, 5], [9_000_000, 5]], [/continue/, /continue/]],
];

for (const [name, l, samples, want] of rows) {
  test(`migration watchdog: ${name}`, () => {
    const got = run(l, samples);
    assert.equal(got.length, want.length);
    got.forEach((g, i) => assert.match(g, want[i] as RegExp, `sample ${i}`));
  });
}
