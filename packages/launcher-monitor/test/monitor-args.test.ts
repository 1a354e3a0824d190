import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DEFAULT_QEMU_STOP_TIMEOUT_MS, DEFAULT_REAP_SWEEP_INTERVAL_MS, launcherEnv, parseMonitorArgs } from '../src/monitor-args.js';
import type { MonitorArgs } from '../src/monitor-args.js';
import { MonitorError } from '../src/monitor-error.js';

const DEFAULTS: MonitorArgs = {
  launcherBin: 'podvirt-launcher',
  launcherArgs: [],
  keepAfterFailure: false,
  qemuStopTimeoutMs: DEFAULT_QEMU_STOP_TIMEOUT_MS,
  reapSweepIntervalMs: DEFAULT_REAP_SWEEP_INTERVAL_MS,
};

const CASES: [string, string[], Record<string, string>, Partial<MonitorArgs>][] = [
  ['defaults', [], {}, {}],
  ['passes unknown flags through in order', ['--uid', '107', '--qemu-timeout', '240s', '-v=3'], {}, { launcherArgs: ['--uid', '107', '--qemu-timeout', '240s', '-v=3'] }],
  ['takes out --keep-after-failure wherever it is', ['--uid', '1', '--keep-after-failure', '--x'], {}, { keepAfterFailure: true, launcherArgs: ['--uid', '1', '--x'] }],
  ['accepts Go-style single dashes and =false', ['-keep-after-failure=false'], {}, { keepAfterFailure: false }],
  ['--launcher-bin beats the environment', ['--launcher-bin', '/a'], { PODVIRT_LAUNCHER_BIN: '/b' }, { launcherBin: '/a' }],
  ['the environment beats the default', [], { PODVIRT_LAUNCHER_BIN: '/b' }, { launcherBin: '/b' }],
  ['durations in ms, s, m and bare seconds', ['--qemu-stop-timeout=250ms', '--reap-sweep-interval', '1.5'], {}, { qemuStopTimeoutMs: 250, reapSweepIntervalMs: 1_500 }],
  ['minutes', ['--qemu-stop-timeout', '2m'], {}, { qemuStopTimeoutMs: 120_000 }],
  ['nothing after -- is interpreted', ['--', '--keep-after-failure', '--launcher-bin', 'x'], {}, { launcherArgs: ['--keep-after-failure', '--launcher-bin', 'x'] }],
];

for (const [name, argv, env, expected] of CASES) {
  test(name, () => {
    assert.deepEqual(parseMonitorArgs(argv, env), { ...DEFAULTS, ...expected });
  });
}

const ERRORS: [string, string[], RegExp][] = [
  ['a value flag without a value', ['--launcher-bin'], /^--launcher-bin: needs a value$/],
  ['a duration without a number', ['--qemu-stop-timeout', 'soon'], /^--qemu-stop-timeout: "soon" is not a duration/],
  ['a negative duration', ['--qemu-stop-timeout=-1s'], /is negative/],
  ['a duration beyond a timer', ['--reap-sweep-interval', '40000m'], /^--reap-sweep-interval: .* is too long/],
  ['a non-boolean', ['--keep-after-failure=maybe'], /^--keep-after-failure: .* is not true or false/],
  ['an empty launcher', ['--launcher-bin='], /^--launcher-bin: .*must not be empty/],
];

for (const [name, argv, message] of ERRORS) {
  test(`rejects ${name}`, () => {
    assert.throws(
      () => parseMonitorArgs(argv, {}),
      (err: unknown) => err instanceof MonitorError && err.code === 'MONITOR_ERR_USAGE' && message.test(err.message),
    );
  });
}

test("the launcher's environment is the monitor's with one malloc arena over it", () => {
  const monitorEnv = { PATH: '/usr/bin', PODVIRT_LAUNCHER_BIN: '/b', MALLOC_ARENA_MAX: '8' };
  assert.deepEqual(launcherEnv(monitorEnv), { PATH: '/usr/bin', PODVIRT_LAUNCHER_BIN: '/b', MALLOC_ARENA_MAX: '1' });
  assert.equal(monitorEnv.MALLOC_ARENA_MAX, '8', "the monitor's own is left alone");
});
