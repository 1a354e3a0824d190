// Failures around the real launcher: the libvirt daemon SIGKILLed (restarted, VM untouched,
// events flow again), an unsupported device (INVALID_ARGUMENT naming it, service goes on),
// and qemu SIGKILLed (the crash reported, the launcher exits).
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { eventually } from '@podvirt/test-support';
import { processesInMountNamespace } from '../testbed/index.js';
import { assertNothingLeft, collectWatch, domains, startLauncher, vmiRequest, waitForReady, type LauncherRun } from './launcher-run.js';

async function pidOf(run: LauncherRun, comm: string): Promise<number | undefined> {
  for (const pid of await processesInMountNamespace(run.container.mountNamespace)) {
    if ((await readFile(`/proc/${pid}/comm`, 'utf8').catch(() => '')).trim() === comm) return pid;
  }
  return undefined;
}

test('libvirt daemon SIGKILLed: restarted, the VM keeps running, events flow; a bad VMI is refused by field', { timeout: 120_000 }, async (t) => {
  const run = await startLauncher(t);
  await waitForReady(run);
  const comm = run.daemon.kind;
  const daemon = await eventually(() => pidOf(run, comm), { what: comm, deadlineMs: 20_000, stepMs: 100 });
  const qemu = await eventually(() => pidOf(run, 'qemu-system-x86'), { what: 'qemu', deadlineMs: 20_000, stepMs: 100 });
  process.kill(daemon, 'SIGKILL');
  const killedAt = Date.now();
  const restarted = await eventually(async () => {
    const pid = await pidOf(run, comm);
    return pid !== undefined && pid !== daemon ? pid : undefined;
  }, { what: `a new ${comm}`, deadlineMs: 20_000, stepMs: 100 });
  t.diagnostic(`${comm} ${daemon} → ${restarted} after ${Date.now() - killedAt} ms`);
  assert.equal(await pidOf(run, 'qemu-system-x86'), qemu, 'qemu was not disturbed');
  const watch = collectWatch(run);
  await eventually(async () =>
    run.cmd.pause(vmiRequest(run), { timeoutMs: 5_000 }).then(() => true, () => undefined), { what: 'pause through the new connection', deadlineMs: 20_000, stepMs: 100 });
  await eventually(() => domains(watch.events).find((d) => d.state === 'Paused' && d.reason === 'User'), { what: 'Paused on WatchDomain', deadlineMs: 20_000, stepMs: 100 });
  await run.cmd.unpause(vmiRequest(run));
  await eventually(() => domains(watch.events).find((d) => d.state === 'Running' && d.reason === 'Unpaused'), { what: 'Running again on WatchDomain', deadlineMs: 20_000, stepMs: 100 });
  assert.ok(run.logs().some((l) => l['msg'] === 'libvirt daemon exited, restarting'));

  const bad = structuredClone(run.vmi) as { spec: { domain: { devices: Record<string, unknown> } } };
  bad.spec.domain.devices['gpus'] = [{ name: 'gpu1', deviceName: 'nvidia.com/GP102GL' }];
  const err = await run.cmd.sync({ vmiJson: Buffer.from(JSON.stringify(bad)) }).then(() => undefined, (e: grpc.ServiceError) => e);
  assert.equal(err?.code, grpc.status.INVALID_ARGUMENT);
  assert.match(err?.details ?? '', /spec\.domain\.devices\.gpus\[0\]/);
  await run.cmd.ping({});
  assert.equal((await run.cmd.getDomain({})).domain?.state, 'Running');
  assert.equal(await pidOf(run, 'qemu-system-x86'), qemu);
});

test('qemu SIGKILLed: the crash is reported on WatchDomain and the launcher exits', { timeout: 120_000 }, async (t) => {
  const run = await startLauncher(t);
  const watch = collectWatch(run);
  await waitForReady(run);
  const qemu = await eventually(() => pidOf(run, 'qemu-system-x86'), { what: 'qemu', deadlineMs: 20_000, stepMs: 100 });
  process.kill(qemu, 'SIGKILL');
  const exit = await run.container.exited;
  await watch.ended;
  assert.deepEqual(exit, { code: 0, signal: null });
  const last = domains(watch.events).at(-1);
  assert.equal(`${last?.state}/${last?.deleted}`, 'Shutoff/true');
  assert.ok(['Crashed', 'Failed'].includes(last?.reason ?? ''), `reason ${last?.reason}`);
  assert.deepEqual(await assertNothingLeft(run), []);
});

test('no domain defined within --qemu-timeout: the launcher exits with an error and leaves nothing', { timeout: 60_000 }, async (t) => {
  const run = await startLauncher(t, { standalone: false, qemuTimeout: '3s' });
  await run.cmd.ping({});
  assert.equal((await run.cmd.getDomain({})).domain, undefined);
  const exit = await run.container.exited;
  assert.deepEqual(exit, { code: 1, signal: null });
  assert.ok(run.logs().some((l) => l['msg'] === 'no domain was defined within the qemu timeout'));
  assert.deepEqual(await assertNothingLeft(run), []);
});
