// The monitor as a real process, driven by fake launchers written as shell scripts: once as
// an ordinary child that makes itself a subreaper, once as PID 1 of its own PID namespace
// (as in a pod). Reaping must come from SIGCHLD alone, so the safety sweep is set to 10 min.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import type { TestContext } from 'node:test';
import {
  makeFakeQemu,
  makeTempDir,
  messages,
  readPids,
  startMonitor,
  writeScript,
} from './helpers/monitor-process.js';
import { eventually } from '@podvirt/test-support';

const BURST = 100;
const NO_SWEEP = '--reap-sweep-interval=10m';
const TIMEOUT = { timeout: 30_000 };

// N orphans (`cat` re-parented to the monitor once its subshell exits) all blocked on one
// pipe; closing the launcher's write ends gives every one of them EOF at the same moment.
function burstScript(count: number, after: string): string {
  return `dir="$1"
mkfifo "$dir/go"
exec 3<>"$dir/go" 4<"$dir/go" 5>"$dir/go"
i=0
while [ $i -lt ${count} ]; do
  (cat <&4 >/dev/null 3>&- 5>&- & echo $! >> "$dir/orphans")
  i=$((i + 1))
done
exec 3>&- 4<&- 5>&-
${after}`;
}

// The launcher waits for SIGTERM (or SIGINT/SIGQUIT, to prove they never arrive as such).
const WAIT_FOR_SIGNAL = `trap 'echo TERM > "$dir/got"; kill $s; exit 42' TERM
trap 'echo INT > "$dir/got"; kill $s; exit 43' INT
trap 'echo QUIT > "$dir/got"; kill $s; exit 44' QUIT
sleep 60 3>&- 4<&- 5>&- & s=$!
echo ready > "$dir/ready"
wait $s`;

function startQemuScript(ignoreTerm: boolean, exitCode: number): string {
  return `dir="$1"
(${ignoreTerm ? "trap '' TERM; " : ''}exec "$dir/qemu-system-x86_64" 60 & echo $! > "$dir/qemu.pid")
q=$(cat "$dir/qemu.pid")
while [ "$(cat /proc/$q/comm)" != qemu-system-x86 ]; do sleep 0.01; done
exit ${exitCode}`;
}

for (const pidNamespace of [false, true]) {
  describe(pidNamespace ? 'monitor as PID 1 of a PID namespace' : 'monitor as a child subreaper', () => {
    const start = (t: TestContext, args: readonly string[]) =>
      startMonitor(t, args, { pidNamespace });

    test('reaps a burst of orphans exiting together, leaving no zombie, then forwards SIGTERM', TIMEOUT, async (t) => {
      const dir = makeTempDir(t);
      const launcher = writeScript(dir, 'launcher.sh', burstScript(BURST, WAIT_FOR_SIGNAL));
      const monitor = start(t, ['--launcher-bin', launcher, NO_SWEEP, dir]);

      await eventually(() => messages(monitor.lines, 'reaped orphan').length >= BURST, { what: 'every orphan reaped', deadlineMs: 10_000 });
      const orphans = readPids(join(dir, 'orphans'));
      const reaped = messages(monitor.lines, 'reaped orphan');
      assert.equal(orphans.length, BURST);
      assert.deepEqual(reaped.map((l) => l.pid).sort(), [...orphans].sort());
      assert.ok(reaped.every((l) => l['comm'] === 'cat' && l['how'] === 'exited' && l['status'] === 0));
      assert.deepEqual(await monitor.zombies(), []);

      const started = messages(monitor.lines, 'monitor started')[0];
      assert.equal(started?.['subreaper'], true);
      if (pidNamespace) assert.equal(started?.['pid'], 1);

      await eventually(() => isFile(join(dir, 'ready')), { what: 'launcher ready', deadlineMs: 10_000 });
      await monitor.signal('SIGTERM');
      assert.deepEqual(await monitor.exited, { code: 42, signal: null });
    });

    test('keeps the launcher exit code when the launcher exits amid a burst of orphans', TIMEOUT, async (t) => {
      const dir = makeTempDir(t);
      const launcher = writeScript(dir, 'launcher.sh', burstScript(BURST, 'exit 7'));
      const monitor = start(t, ['--launcher-bin', launcher, NO_SWEEP, dir]);

      assert.deepEqual(await monitor.exited, { code: 7, signal: null });
      const reaped = messages(monitor.lines, 'reaped orphan').map((l) => l.pid);
      assert.deepEqual(reaped.sort(), readPids(join(dir, 'orphans')).sort());
      assert.equal(messages(monitor.lines, 'launcher exited')[0]?.['exitCode'], 7);
      assert.equal(messages(monitor.lines, 'monitor exiting')[0]?.['qemu'], 'none');
    });

    for (const signal of ['SIGTERM', 'SIGINT', 'SIGQUIT'] as const) {
      test(`forwards ${signal} to the launcher as SIGTERM`, TIMEOUT, async (t) => {
        const dir = makeTempDir(t);
        const launcher = writeScript(dir, 'launcher.sh', `dir="$1"\n${WAIT_FOR_SIGNAL}`);
        const monitor = start(t, ['--launcher-bin', launcher, dir]);
        await eventually(() => isFile(join(dir, 'ready')), { what: 'launcher ready', deadlineMs: 10_000 });

        await monitor.signal(signal);
        assert.deepEqual(await monitor.exited, { code: 42, signal: null });
        assert.equal(readText(join(dir, 'got')), 'TERM');
        assert.equal(messages(monitor.lines, 'forwarding signal to launcher as SIGTERM')[0]?.['signal'], signal);
      });
    }

    test('SIGTERMs a leftover qemu after the launcher exits and keeps the launcher code', TIMEOUT, async (t) => {
      const dir = makeTempDir(t);
      makeFakeQemu(dir);
      const launcher = writeScript(dir, 'launcher.sh', startQemuScript(false, 5));
      const monitor = start(t, ['--launcher-bin', launcher, '--qemu-stop-timeout=20s', dir]);

      assert.deepEqual(await monitor.exited, { code: 5, signal: null });
      const [qemuPid] = readPids(join(dir, 'qemu.pid'));
      assert.deepEqual(messages(monitor.lines, 'terminating leftover qemu')[0]?.['pids'], [qemuPid]);
      const reapedQemu = messages(monitor.lines, 'reaped orphan').find((l) => l.pid === qemuPid);
      assert.equal(reapedQemu?.['comm'], 'qemu-system-x86');
      assert.equal(reapedQemu?.['how'], 'killed');
      assert.equal(reapedQemu?.['status'], 15, 'qemu stopped on SIGTERM, not SIGKILLed at the 20 s bound');
      assert.equal(messages(monitor.lines, 'monitor exiting')[0]?.['qemu'], 'terminated');
    });

    test('SIGKILLs a qemu that ignores SIGTERM after the bound and exits non-zero', TIMEOUT, async (t) => {
      const dir = makeTempDir(t);
      makeFakeQemu(dir);
      const launcher = writeScript(dir, 'launcher.sh', startQemuScript(true, 0));
      const monitor = start(t, ['--launcher-bin', launcher, '--qemu-stop-timeout', '600ms', dir]);

      const exited = await monitor.exited;
      const killing = messages(monitor.lines, 'qemu ignored SIGTERM, killing it')[0];
      const terminating = messages(monitor.lines, 'terminating leftover qemu')[0];
      assert.deepEqual(exited, { code: 1, signal: null });
      assert.ok(killing !== undefined && terminating !== undefined);
      assert.ok(Number(killing['time']) - Number(terminating['time']) >= 600, 'SIGKILL only after the bound');
      const [qemuPid] = readPids(join(dir, 'qemu.pid'));
      const reapedQemu = messages(monitor.lines, 'reaped orphan').find((l) => l.pid === qemuPid);
      assert.equal(reapedQemu?.['status'], 9);
      assert.equal(messages(monitor.lines, 'monitor exiting')[0]?.['qemu'], 'killed');
    });

    test('--keep-after-failure keeps the container alive until SIGTERM, then exits with the failure code', TIMEOUT, async (t) => {
      const dir = makeTempDir(t);
      const launcher = writeScript(dir, 'launcher.sh', 'echo "$@" > "$1/args"\nexit 3');
      const monitor = start(t, ['--keep-after-failure', '--launcher-bin', launcher, dir, '--uid', '1234']);

      await eventually(() => messages(monitor.lines, 'keeping launcher container alive after failure until SIGTERM').length > 0, {
        what: 'keep-alive',
        deadlineMs: 10_000,
      });
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.equal(monitor.child.exitCode, null, 'still alive');
      assert.equal(readText(join(dir, 'args')), `${dir} --uid 1234`);

      await monitor.signal('SIGTERM');
      assert.deepEqual(await monitor.exited, { code: 3, signal: null });
    });
  });
}

describe('monitor edge cases', () => {
  test('--keep-after-failure does not hold a successful launcher', TIMEOUT, async (t) => {
    const dir = makeTempDir(t);
    const launcher = writeScript(dir, 'launcher.sh', 'exit 0');
    const monitor = startMonitor(t, ['--keep-after-failure', '--launcher-bin', launcher]);
    assert.deepEqual(await monitor.exited, { code: 0, signal: null });
  });

  test('a launcher killed by a signal gives 128 + the signal number', TIMEOUT, async (t) => {
    const dir = makeTempDir(t);
    const launcher = writeScript(dir, 'launcher.sh', 'kill -KILL $$');
    const monitor = startMonitor(t, ['--launcher-bin', launcher]);
    assert.deepEqual(await monitor.exited, { code: 137, signal: null });
  });

  test('a launcher that cannot start makes the monitor exit 1', TIMEOUT, async (t) => {
    const dir = makeTempDir(t);
    const monitor = startMonitor(t, ['--launcher-bin', join(dir, 'missing')]);
    assert.deepEqual(await monitor.exited, { code: 1, signal: null });
    assert.equal(messages(monitor.lines, 'launcher failed to start')[0]?.['level'], 50);
  });

  test('a bad flag value is a usage error with exit 1', TIMEOUT, async (t) => {
    const monitor = startMonitor(t, ['--launcher-bin', '/bin/true', '--qemu-stop-timeout', 'soon']);
    assert.deepEqual(await monitor.exited, { code: 1, signal: null });
    assert.equal(messages(monitor.lines, 'monitor cannot start')[0]?.['code'], 'MONITOR_ERR_USAGE');
  });
});

function readText(path: string): string {
  return readFileSyncSafe(path).trim();
}

function isFile(path: string): boolean {
  return readFileSyncSafe(path) !== '';
}

function readFileSyncSafe(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}
