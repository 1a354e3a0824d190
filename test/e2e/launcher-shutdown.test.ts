// SIGTERM to the real launcher: the guest is asked to power off (again and again, since a
// press before acpid runs is lost) and the launcher exits 0 leaving nothing behind; a guest
// that ignores the power button is destroyed at the grace deadline.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { eventually } from '@podvirt/test-support';
import { assertNothingLeft, collectWatch, domains, startLauncher, waitForReady } from './launcher-run.js';

test('SIGTERM while booting: re-sent power button, guest powers off, exit 0, nothing left', { timeout: 120_000 }, async (t) => {
  const run = await startLauncher(t, { gracePeriodSeconds: 40 });
  const watch = collectWatch(run);
  await eventually(() => domains(watch.events).some((d) => d.state === 'Running'), { what: 'Running on WatchDomain', deadlineMs: 60_000 });
  const sentAt = Date.now();
  run.container.kill('SIGTERM');
  const exit = await run.container.exited;
  const took = Date.now() - sentAt;
  await watch.ended;
  assert.deepEqual(exit, { code: 0, signal: null });
  const seen = domains(watch.events);
  const marked = seen.find((d) => d.gracefulShutdown?.started);
  assert.ok(marked, 'the graceful-shutdown mark is visible on WatchDomain');
  // The handler is told the VMI's own period (10 s, from the Sync); the launcher destroys at
  // its own, --grace-period-seconds (the controller pads it beyond the VMI's).
  assert.equal(marked.gracefulShutdown?.gracePeriodSeconds, (run.vmi['spec'] as { terminationGracePeriodSeconds: number }).terminationGracePeriodSeconds);
  assert.equal(marked.gracefulShutdown.deadlineMs - marked.gracefulShutdown.startedAtMs, 40_000);
  const last = seen.at(-1);
  assert.equal(`${last?.state}/${last?.reason}/${last?.deleted}`, 'Shutoff/Shutdown/true');
  const { readFile } = await import('node:fs/promises');
  const serial = await readFile(run.serialLog, 'utf8');
  // Sent while the guest boots, the request reaches it as libvirt's shutdown does: through the
  // agent once it answers, else the ACPI button (re-sent, as a press before acpid runs is lost).
  // Either way the guest powered itself off, which a destroy would not show.
  assert.match(serial, /PODVIRT-GUEST-(ACPI-POWERBUTTON|AGENT-SHUTDOWN)/, 'the guest shut itself down');
  assert.deepEqual(await assertNothingLeft(run), []);
  const shutdownLogs = run.logs().filter((l) => l['msg'] === 'graceful shutdown started');
  assert.equal(shutdownLogs.length, 1);
  t.diagnostic(`SIGTERM → exit: ${took} ms`);
});

test('a guest that ignores the power button is destroyed at the grace deadline', { timeout: 120_000 }, async (t) => {
  const run = await startLauncher(t, { gracePeriodSeconds: 6, extraKernelArgs: 'podvirt.acpi=ignore podvirt.agent=off' });
  const watch = collectWatch(run);
  await waitForReady(run);
  const sentAt = Date.now();
  run.container.kill('SIGTERM');
  const exit = await run.container.exited;
  const took = Date.now() - sentAt;
  await watch.ended;
  assert.deepEqual(exit, { code: 0, signal: null });
  const last = domains(watch.events).at(-1);
  assert.equal(`${last?.state}/${last?.reason}/${last?.deleted}`, 'Shutoff/Destroyed/true');
  assert.ok(took >= 6_000, `destroyed after ${took} ms, not before the grace deadline`);
  const { readFile } = await import('node:fs/promises');
  assert.match(await readFile(run.serialLog, 'utf8'), /PODVIRT-GUEST-ACPI-IGNORED/);
  assert.deepEqual(await assertNothingLeft(run), []);
  t.diagnostic(`SIGTERM → destroy → exit: ${took} ms`);
});
