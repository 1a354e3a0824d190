// The real launcher (virtqemud + qemu under TCG, in its own mount namespace) booting the test
// guest from STANDALONE_VMI, then driven over gRPC: pause, unpause, freeze, unfreeze,
// freeze with auto-thaw, soft reboot, reset, guest info, filesystems.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { cmd } from '@podvirt/proto';
import { eventually } from '@podvirt/test-support';
import { daemonDriverModules, startLauncher, vmiRequest, waitForReady, type LauncherRun } from './launcher-run.js';

async function domain(run: LauncherRun): Promise<cmd.Domain | undefined> {
  return (await run.cmd.getDomain({})).domain;
}

/** The domain once `check` holds for it, read every 200 ms; the failure shows the last one read. */
async function until(what: string, run: LauncherRun, check: (d: cmd.Domain | undefined) => boolean, deadlineMs = 30_000): Promise<cmd.Domain> {
  let last: cmd.Domain | undefined;
  return eventually(async () => {
    last = await domain(run);
    return check(last) ? last : undefined;
  }, { what, deadlineMs, stepMs: 200, detail: () => `last: ${JSON.stringify(last)}` });
}

test('boots to the ready marker, Running on WatchDomain, then every lifecycle call works', { timeout: 180_000 }, async (t) => {
  const run = await startLauncher(t);
  const first = await new Promise<cmd.Domain>((resolve, reject) => {
    const stream = run.client.watchDomain({});
    stream.on('data', (ev: cmd.WatchDomainEvent) => {
      if (ev.event?.$case === 'domain' && ev.event.value.state === 'Running') { stream.cancel(); resolve(ev.event.value); }
    });
    stream.on('error', (err: { code?: number }) => { if (err.code !== 1) reject(err); });
  });
  assert.equal(`${first.name}/${first.reason}`, 'e2e_guest/Booted');
  // The daemon (virtqemud, or the libvirtd fallback pointed at one module) runs the QEMU driver alone.
  assert.deepEqual(await daemonDriverModules(run), ['qemu']);
  const ready = await waitForReady(run);
  assert.match(ready.line, /PODVIRT-GUEST-READY .* agent/);
  const agentUp = await until('agent connected', run, (d) => d?.agentConnected === true && d.osInfo !== undefined);
  assert.match(agentUp?.machine ?? '', /q35/);

  await run.cmd.pause(vmiRequest(run));
  let d = await domain(run);
  assert.equal(`${d?.state}/${d?.reason}/${d?.pausedByUser}`, 'Paused/User/true');
  await run.cmd.unpause(vmiRequest(run));
  d = await domain(run);
  assert.equal(`${d?.state}/${d?.pausedByUser}`, 'Running/false');
  // The clock stood still while paused: qemu-ga in the guest took the host's time.
  await eventually(() => run.logs().some((l) => l['msg'] === 'guest clock set'), { what: 'the guest clock set after the unpause', deadlineMs: 30_000 });
  assert.ok(!run.logs().some((l) => l['msg'] === 'guest clock not set: the guest agent did not take it'));

  const fs = await run.cmd.getFilesystems({});
  assert.ok(fs.filesystems.some((f) => f.mountPoint === '/mnt' && f.fileSystemType === 'ext4'), JSON.stringify(fs));
  const info = await run.cmd.getGuestInfo({});
  assert.match(info.guestAgentVersion, /^\d+\.\d+/);
  assert.ok(info.supportedCommands.some((c) => c.name === 'guest-fsfreeze-freeze'));
  assert.notEqual(info.os?.kernelRelease, '');
  await run.cmd.guestPing({ timeoutSeconds: 5 });

  const freeze = { vmiJson: vmiRequest(run).vmiJson, unfreezeTimeoutSeconds: 0 };
  await run.cmd.freeze(freeze);
  assert.equal((await domain(run))?.fsFreezeStatus, 'frozen');
  assert.equal((await run.cmd.getGuestInfo({})).fsFreezeStatus, 'frozen');
  await run.cmd.unfreeze(vmiRequest(run));
  assert.equal((await domain(run))?.fsFreezeStatus, '');
  await run.cmd.freeze({ ...freeze, unfreezeTimeoutSeconds: 2 });
  assert.equal((await domain(run))?.fsFreezeStatus, 'frozen');
  await until('auto-thaw', run, (x) => x?.fsFreezeStatus === '', 10_000);

  await run.cmd.softReboot(vmiRequest(run));
  const second = await waitForReady(run, ready.end);
  await until('agent back after reboot', run, (x) => x?.agentConnected === true);
  await run.cmd.reset(vmiRequest(run));
  await waitForReady(run, second.end);
  d = await domain(run);
  assert.equal(d?.state, 'Running');
  const stats = await run.cmd.getDomainStats({});
  assert.ok((stats.values['cpu.time'] ?? 0) > 0, JSON.stringify(stats).slice(0, 200));
  const qemuLines = run.logs().filter((l) => l['subcomponent'] === 'qemu');
  assert.ok(qemuLines.length > 0, 'the qemu log is re-emitted');
  assert.ok(run.logs().every((l) => l['component'] === 'virt-launcher'));
});
