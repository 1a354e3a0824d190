// The real monitor as PID 1 of the launcher container, with the real launcher, libvirt daemon
// and qemu under TCG: qemu is re-parented to the monitor, so a destroy is not held up by a
// zombie; SIGTERM reaches the guest as a power-button press and everything ends cleanly.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { test } from 'node:test';
import { eventually } from '@podvirt/test-support';
import { guestImage, waitForConsoleText } from '../testbed/index.js';
import { collectWatch, domains } from './launcher-run.js';
import { exists, lingeringZombies, memoryRollup, namespacePid, parentOf, procStat, sampleZombies } from './monitor-procfs.js';
import { findLog, leftovers, qemuOf, startMonitorRun } from './monitor-run.js';

const BOOT_MS = 90_000;

test('qemu is the monitor\'s child; Kill destroys it with no zombie left behind; the monitor exits 0', { timeout: 180_000 }, async (t) => {
  const run = await startMonitorRun(t);
  const zombies = sampleZombies(run.monitorPid, 100);
  t.after(() => zombies.stop().then(() => undefined));
  assert.match(await readFile(`/proc/${run.monitorPid}/status`, 'utf8'), new RegExp(`^NSpid:\\s+${run.monitorPid}\\s+1$`, 'm'), 'the monitor is PID 1 of its namespace');
  assert.match(await readFile(`/proc/${run.monitorPid}/cmdline`, 'utf8'), /podvirt-launcher-monitor\.js/);
  await waitForConsoleText(run.serialLog, run.guest.readyMarker, { timeoutMs: BOOT_MS });
  const qemu = await eventually(() => qemuOf(run), { what: 'qemu below the monitor', deadlineMs: 30_000, detail: run.output });
  assert.equal(await parentOf(qemu.pid), run.monitorPid, 'libvirt double-forked qemu, so its parent is the monitor');

  // Steady state: the monitor idles next to a running VM.
  await new Promise((r) => setTimeout(r, 2_000));
  const mem = await memoryRollup(run.monitorPid);
  assert.ok((mem['Pss'] ?? 0) > 0 && (mem['Rss'] ?? 0) >= (mem['Pss'] ?? 0), JSON.stringify(mem));
  const fields = ['Rss', 'Pss', 'Pss_Anon', 'Pss_File', 'Anonymous', 'Private_Dirty', 'Shared_Clean'];
  t.diagnostic(`monitor smaps_rollup with a running VM (kB): ${fields.map((f) => `${f} ${mem[f]}`).join(', ')}`);

  // The monitor is PID 1 of its namespace and logs pids as it sees them.
  const qemuPidInside = await namespacePid(qemu.pid);
  const started = performance.now();
  await run.cmd.kill({ vmiJson: Buffer.from(JSON.stringify(run.vmi)) });
  const took = performance.now() - started;
  t.diagnostic(`Kill (libvirt destroy) returned after ${took.toFixed(0)} ms`);
  // libvirt's destroy waits until kill(pid, 0) fails, which a zombie never does: it returns
  // only once qemu is reaped, so by now the pid must be gone, not a zombie.
  const after = await procStat(qemu.pid);
  assert.ok(after?.startTime !== qemu.startTime, `qemu ${qemu.pid} is still there in state ${after?.state}`);
  // The VM's qemu is reaped exactly once (with a cold capabilities cache, libvirt's probes are
  // other qemu processes the monitor reaps too).
  const reaped = run.monitorLogs().filter((l) => l.msg === 'reaped orphan' && l['pid'] === qemuPidInside);
  assert.equal(reaped.length, 1, 'the monitor logged reaping the VM\'s qemu');
  assert.equal(reaped[0]?.['comm'], qemu.comm);

  assert.deepEqual(await run.container.exited, { code: 0, signal: null });
  const exiting = findLog(run, 'monitor exiting');
  assert.equal(`${exiting?.['exitCode']}/${exiting?.['qemu']}`, '0/none', 'launcher exit 0, and no qemu left for the monitor to stop');
  assert.deepEqual(lingeringZombies(await zombies.stop()), [], 'a zombie stayed among the monitor\'s children');
  assert.deepEqual(await leftovers(run), []);
});

test('SIGTERM to the monitor: the guest powers off within the grace period, exit 0, nothing left', { timeout: 180_000 }, async (t) => {
  // Without its agent the guest can only be asked through the ACPI power button.
  const run = await startMonitorRun(t, { gracePeriodSeconds: 40, extraKernelArgs: guestImage().noAgentArg });
  const zombies = sampleZombies(run.monitorPid, 100);
  t.after(() => zombies.stop().then(() => undefined));
  const watch = collectWatch(run);
  const ready = await waitForConsoleText(run.serialLog, run.guest.readyMarker, { timeoutMs: BOOT_MS });
  const qemu = await eventually(() => qemuOf(run), { what: 'qemu below the monitor', deadlineMs: 30_000, detail: run.output });

  const sentAt = performance.now();
  run.container.kill('SIGTERM');
  const exit = await run.container.exited;
  const took = performance.now() - sentAt;
  t.diagnostic(`SIGTERM → monitor exit: ${took.toFixed(0)} ms`);
  assert.deepEqual(exit, { code: 0, signal: null });
  await watch.ended;
  await waitForConsoleText(run.serialLog, run.guest.acpiPowerButtonMarker, { timeoutMs: 1_000, from: ready.end });
  // Shutoff/Shutdown (not Destroyed) means the guest powered off before the grace deadline.
  const last = domains(watch.events).at(-1);
  assert.equal(`${last?.state}/${last?.reason}/${last?.deleted}`, 'Shutoff/Shutdown/true');

  const forwarded = findLog(run, 'forwarding signal to launcher as SIGTERM');
  assert.equal(forwarded?.['signal'], 'SIGTERM');
  const launcherExit = findLog(run, 'launcher exited');
  assert.equal(launcherExit?.['exitCode'], 0);
  assert.equal(findLog(run, 'monitor exiting')?.['qemu'], 'none', 'the launcher, not the monitor, stopped qemu');
  assert.ok(run.logs().some((l) => l.msg === 'graceful shutdown started' && l.component === 'virt-launcher'));
  assert.equal(await exists(qemu), false, 'qemu is gone');
  assert.deepEqual(lingeringZombies(await zombies.stop()), [], 'a zombie stayed among the monitor\'s children');
  assert.deepEqual(await leftovers(run), []);
});
