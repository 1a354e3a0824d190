// The launcher SIGKILLed under the real monitor (PID 1 of the container): the monitor stops
// the orphaned qemu itself, within its bound, and exits non-zero; with --keep-after-failure
// it stays up afterwards (qemu stopped) until SIGTERM.
import assert from 'node:assert/strict';
import { constants } from 'node:os';
import { performance } from 'node:perf_hooks';
import { test } from 'node:test';
import { eventually } from '@podvirt/test-support';
import { waitForConsoleText, type ContainerExit } from '../testbed/index.js';
import { childrenOf, cpuTicks, exists, lingeringZombies, parentOf, sampleZombies, type ProcStat } from './monitor-procfs.js';
import { findLog, launcherOf, leftovers, qemuOf, startMonitorRun, type MonitorRun } from './monitor-run.js';

const SIGKILL_EXIT = 128 + 9;

/**
 * The monitor's exit status as the container reports it. The container's shell learns it from
 * bash's `wait`, where exit(137) and death by SIGKILL read the same (128 + 9), and re-raises
 * it as SIGKILL; so the status is checked here and the monitor's own `monitor exiting` line,
 * written just before process.exit(), tells which it was.
 */
function exitStatus(exit: ContainerExit): number {
  return exit.code ?? 128 + (exit.signal === null ? 0 : constants.signals[exit.signal]);
}


/** Boots the guest and SIGKILLs the launcher; resolves with what was running at that moment. */
async function killLauncher(run: MonitorRun): Promise<{ qemu: ProcStat; launcher: ProcStat; killedAt: number }> {
  await waitForConsoleText(run.serialLog, run.guest.readyMarker, { timeoutMs: 90_000 });
  const qemu = await eventually(() => qemuOf(run), { what: 'qemu below the monitor', deadlineMs: 30_000, detail: run.output });
  const launcher = await eventually(() => launcherOf(run), { what: 'the launcher', deadlineMs: 5_000, detail: run.output });
  assert.equal(await parentOf(qemu.pid), run.monitorPid);
  process.kill(launcher.pid, 'SIGKILL');
  return { qemu, launcher, killedAt: performance.now() };
}

/** The monitor's account of the launcher's death and of the leftover qemu it stopped. */
function assertMonitorStoppedQemu(run: MonitorRun, qemu: ProcStat): void {
  const exited = findLog(run, 'launcher exited');
  assert.equal(`${exited?.['signal']}/${exited?.['exitCode']}`, `SIGKILL/${SIGKILL_EXIT}`);
  assert.equal(findLog(run, 'dirty launcher shutdown')?.['exitCode'], SIGKILL_EXIT);
  const terminating = findLog(run, 'terminating leftover qemu');
  assert.ok(terminating !== undefined, `the monitor did not stop qemu:\n${run.output()}`);
  assert.equal((terminating['pids'] as unknown[]).length, 1, 'exactly the one qemu');
  assert.equal(terminating['timeoutMs'], 10_000);
  // `terminated`: qemu was gone before the bound ran out (SIGKILL would say `killed`).
  const exiting = findLog(run, 'monitor exiting');
  assert.equal(`${exiting?.['exitCode']}/${exiting?.['qemu']}`, `${SIGKILL_EXIT}/terminated`);
  assert.ok(run.monitorLogs().some((l) => l.msg === 'reaped orphan' && l['comm'] === qemu.comm), 'the monitor reaped qemu');
}

test('launcher SIGKILLed: the monitor stops qemu within its bound and exits non-zero, nothing left', { timeout: 180_000 }, async (t) => {
  const run = await startMonitorRun(t);
  const zombies = sampleZombies(run.monitorPid, 100);
  t.after(() => zombies.stop().then(() => undefined));
  const { qemu, killedAt } = await killLauncher(run);

  const exit = await run.container.exited;
  t.diagnostic(`launcher SIGKILL → monitor exit: ${(performance.now() - killedAt).toFixed(0)} ms`);
  assert.equal(exitStatus(exit), SIGKILL_EXIT);
  assertMonitorStoppedQemu(run, qemu);
  assert.equal(await exists(qemu), false, 'qemu is gone');
  assert.deepEqual(lingeringZombies(await zombies.stop()), [], 'a zombie stayed among the monitor\'s children');
  assert.deepEqual(await leftovers(run, { deadSocket: 'allowed' }), []);
});

test('--keep-after-failure: after the launcher dies the monitor stops qemu and stays up until SIGTERM', { timeout: 180_000 }, async (t) => {
  const run = await startMonitorRun(t, { keepAfterFailure: true });
  let exited = false;
  void run.container.exited.then(() => (exited = true));
  const zombies = sampleZombies(run.monitorPid, 100);
  t.after(() => zombies.stop().then(() => undefined));
  const { qemu, killedAt } = await killLauncher(run);

  await eventually(() => findLog(run, 'keeping launcher container alive after failure until SIGTERM'), { what: 'the keep-alive', deadlineMs: 30_000, detail: run.output });
  t.diagnostic(`launcher SIGKILL → qemu stopped, keep-alive: ${(performance.now() - killedAt).toFixed(0)} ms`);
  assert.equal(findLog(run, 'terminating leftover qemu')?.['timeoutMs'], 10_000);
  assert.equal(await exists(qemu), false, 'qemu was stopped while the monitor stays up');
  assert.equal(await qemuOf(run), undefined);
  const kept = (await childrenOf(run.monitorPid)).map((c) => `${c.comm}:${c.state}`);
  t.diagnostic(`the kept-alive monitor's children: ${kept.join(', ') || 'none'}`);
  // Still up a while later, and not spinning: the keep-alive waits on a timer, not a loop.
  const cpuBefore = await cpuTicks(run.monitorPid);
  await new Promise((r) => setTimeout(r, 2_000));
  assert.equal(exited, false, 'the container is still running');
  const idleTicks = (await cpuTicks(run.monitorPid)) - cpuBefore;
  assert.ok(idleTicks < 20, `the kept-alive monitor used ${idleTicks} CPU ticks in 2 s`);
  assert.equal(findLog(run, 'monitor exiting'), undefined);

  run.container.kill('SIGTERM');
  const exit = await run.container.exited;
  assert.equal(exitStatus(exit), SIGKILL_EXIT, 'SIGTERM ends it with the launcher\'s code');
  assert.ok(findLog(run, 'signal received, ending keep-alive') !== undefined);
  assertMonitorStoppedQemu(run, qemu);
  assert.deepEqual(lingeringZombies(await zombies.stop()), [], 'a zombie stayed among the monitor\'s children');
  assert.deepEqual(await leftovers(run, { deadSocket: 'allowed' }), []);
});
