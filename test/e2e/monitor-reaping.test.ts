// A burst of short-lived orphans under the real monitor: with an empty QEMU capabilities
// cache the libvirt daemon probes every qemu binary, each probe a qemu that libvirt
// daemonizes (so it is re-parented to the monitor) and kills moments later. Every one must be
// reaped on its SIGCHLD, by name in the monitor's log, and no zombie may pile up meanwhile.
import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { eventually } from '@podvirt/test-support';
import { waitForConsoleText } from '../testbed/index.js';
import { lingeringZombies, sampleZombies, type ZombieReport } from './monitor-procfs.js';
import { findLog, leftovers, qemuOf, startMonitorRun } from './monitor-run.js';

// What the kernel keeps of qemu-system-x86_64 and qemu-system-i386 (15 characters).
const QEMU_COMM = /^qemu-system-/;

test('empty capabilities cache: every probe libvirt forks is reaped at once and named in the log', { timeout: 180_000 }, async (t) => {
  let sampler: ReturnType<typeof sampleZombies> | undefined;
  // Sampling starts as soon as the monitor runs, before the launcher has started the daemon.
  const run = await startMonitorRun(t, { capsCache: 'empty', onStart: (pid) => (sampler = sampleZombies(pid, 25)) });
  t.after(() => sampler?.stop().then(() => undefined));
  await waitForConsoleText(run.serialLog, run.guest.readyMarker, { timeoutMs: 90_000 });
  const vmQemu = await eventually(() => qemuOf(run), { what: 'qemu below the monitor', deadlineMs: 30_000, detail: run.output });
  const report: ZombieReport | undefined = await sampler?.stop();
  assert.ok(report !== undefined);

  // The daemon really probed: it wrote the cache that started out empty.
  const cached = await readdir(join(run.libvirtCacheDir, 'qemu', 'capabilities')).catch(() => []);
  assert.ok(cached.some((f) => f.endsWith('.xml')), `no capabilities were cached: ${cached.join(', ')}`);

  const reaped = run.monitorLogs().filter((l) => l.msg === 'reaped orphan');
  const probes = reaped.filter((l) => QEMU_COMM.test(String(l['comm'])));
  assert.ok(probes.length >= 2, `the monitor named too few reaped probes:\n${JSON.stringify(reaped, null, 1)}`);
  assert.ok(reaped.every((l) => l['comm'] !== undefined && l['how'] !== undefined), 'every reaped orphan is named');
  const probeComms = [...new Set(probes.map((l) => String(l['comm'])))].sort();
  // The probes reparented to the monitor were seen alive by the sampler too (not only in the log).
  const seenProbes = [...report.childrenSeen].filter(([comm]) => QEMU_COMM.test(comm)).reduce((n, [, count]) => n + count, 0);
  assert.ok(seenProbes >= 2, `sampler saw ${seenProbes} qemu children: ${JSON.stringify([...report.childrenSeen])}`);

  // A sample may catch a probe between its exit and the SIGCHLD handler, but none may stay.
  assert.deepEqual(lingeringZombies(report), [], 'zombies piled up among the monitor\'s children');
  t.diagnostic(`probes reaped by the monitor: ${probes.length} (${probeComms.join(', ')}); other orphans: ${reaped.length - probes.length}`);
  t.diagnostic(`zombie samples: ${report.samples}, most at once: ${report.maxAtOnce}, sightings: ${JSON.stringify(report.sightings)}`);

  await run.cmd.kill({ vmiJson: Buffer.from(JSON.stringify(run.vmi)) });
  assert.deepEqual(await run.container.exited, { code: 0, signal: null });
  assert.ok(run.monitorLogs().some((l) => l.msg === 'reaped orphan' && l['comm'] === vmQemu.comm && l['how'] === 'exited'), 'the VM\'s qemu was reaped too');
  assert.equal(findLog(run, 'monitor exiting')?.['exitCode'], 0);
  assert.deepEqual(await leftovers(run), []);
});
