// Live migration between two real launchers through the handlers' TLS migration proxy, as on
// two nodes: each launcher's share dir is its pod's /var/run/kubevirt, the source launcher gets
// the unix:// URIs the handler gives it (the same in-pod paths on both sides), the source proxy
// listens on them in the source "pod" and tunnels over mutual TLS to the target proxy, which
// dials the target daemon and the target qemu's sockets in the target "pod". The guest moves
// without a reboot and the proxies leave no socket behind. A guest dirtying its memory (the test
// guest's podvirt.dirty switch) faster than the bandwidth limit hits the progress timeout.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { migrationSocketName } from '@podvirt/handler';
import { eventually } from '@podvirt/test-support';
import { waitForConsoleText } from '../testbed/index.js';
import { hostSocket, migrationOf, proxiedPair, STREAMS } from './launcher-migration-pair.js';
import { collectWatch, UID, vmiRequest, type LauncherRun } from './launcher-run.js';

/** Bounded wait for a launcher's container to end. */
async function ended(run: LauncherRun): Promise<boolean> {
  const exit = await Promise.race([run.container.exited, new Promise<undefined>((r) => setTimeout(() => r(undefined), 60_000).unref())]);
  return exit !== undefined;
}

void test('the guest moves through the TLS migration proxy over unix:// URIs that are the same path in both pods', async (t) => {
  const { src, dst, request, close } = await proxiedPair(t);
  const watch = collectWatch(src);
  await src.cmd.migrate(request());
  await eventually(async () => ((await dst.cmd.getDomain({})).domain?.state === 'Running' ? true : undefined), { what: 'the guest running at the target', deadlineMs: 120_000 });
  await watch.ended;
  const last = migrationOf(watch.events).at(-1);
  assert.equal(last?.phase, 'Succeeded', JSON.stringify(last));
  assert.ok((last?.dataTotal ?? 0) > 0);
  const dstLog = await readFile(dst.serialLog, 'utf8').catch(() => '');
  assert.equal(dstLog.includes(src.guest.readyMarker), false, 'the target never booted the guest');
  await close();
  for (const s of STREAMS) assert.equal(existsSync(hostSocket(src, s)), false, `the source proxy removed ${migrationSocketName(UID, s)}`);
  await dst.cmd.kill(vmiRequest(dst));
  assert.ok(await ended(dst), 'the target launcher ends with its guest');
});

void test('a guest that dirties its memory faster than the bandwidth limit hits the progress timeout and stays home', async (t) => {
  const { src, dst, request } = await proxiedPair(t, { extraKernelArgs: 'podvirt.dirty=48' });
  await waitForConsoleText(src.serialLog, 'PODVIRT-GUEST-DIRTY mib=48 rate=max', { timeoutMs: 60_000 });
  const watch = collectWatch(src);
  await src.cmd.migrate(request({ bandwidthMibPerSecond: 4, progressTimeoutSeconds: 5 }));
  const end = await eventually(() => Promise.resolve(migrationOf(watch.events).find((m) => m.phase === 'Failed')), { what: 'the migration failed', deadlineMs: 180_000 });
  assert.match(end.failureReason, /progress/i, end.failureReason);
  await eventually(async () => ((await src.cmd.getDomain({})).domain?.state === 'Running' ? true : undefined), { what: 'the guest running on the source', deadlineMs: 30_000 });
  assert.ok(await ended(dst), 'the target launcher exits with the incoming domain gone');
  await src.cmd.kill(vmiRequest(src));
  assert.ok(await ended(src), 'the source launcher ends with its guest');
});
