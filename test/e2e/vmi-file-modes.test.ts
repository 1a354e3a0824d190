// After a real VM boots on the testbed (cloud-init user data included), nothing in its launcher
// pod's directories or the handler's host directories is wider than its owner needs: every
// socket (qemu monitor, guest agent, serial console, libvirt, launcher, node API, and any a
// component adds later) and every file with guest output, cloud-init data, keys, domain XML or
// ghost records has no group or other bits. The serial log belongs to the guest-console-log
// container's unprivileged account.
import assert from 'node:assert/strict';
import { stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { NON_ROOT_UID, SERIAL_LOG_FILE } from '@podvirt/api';
import { listModes, widerThanOwner } from './file-modes.js';
import { guestVmi, VmiSuite } from './vmi-stack.js';

const suite = VmiSuite.setUp();

test('sockets and secret-bearing files of a running VM and of the handler are owner-only', { timeout: 240_000 }, async () => {
  const vmi = guestVmi(suite.guest, 'vm-modes') as { spec: { domain: { devices: { disks: unknown[] } }; volumes: unknown[] } };
  vmi.spec.domain.devices.disks.push({ name: 'ci', disk: { bus: 'virtio' } });
  vmi.spec.volumes.push({ name: 'ci', cloudInitNoCloud: { userData: '#cloud-config\npassword: not-for-others\n' } });
  await suite.apply(vmi as unknown as Record<string, unknown>);
  const running = await suite.waitForPhase('vm-modes', 'Running');
  await suite.waitForGuestReady(running);
  await suite.eventually('agent connected', async () =>
    (await suite.vmi('vm-modes'))?.status?.conditions?.some((c) => c.type === 'AgentConnected') === true ? true : undefined);
  const podUid = Object.keys(running.status?.activePods ?? {})[0] ?? '';
  const roots = [join(suite.stack.testbed.kubeletRoot, 'pods', podUid), join(suite.stack.stateDir, 'handler')];
  const all = await listModes(roots);
  for (const expected of ['virt-serial0', 'monitor.sock', 'org.qemu.guest_agent.0', 'launcher-sock', 'node.sock', 'virt-serial0-log', 'noCloud.iso']) {
    assert.ok(all.some((l) => l.endsWith(`/${expected}`)), `${expected} exists (so the walk covers it):\n${all.join('\n')}`);
  }
  // The serial log belongs to the account the guest-console-log container runs as (it reads the
  // log with no capability), owner-only all the same; its directory stays root's, and others may
  // only pass through it.
  const serialLog = (all.find((l) => l.endsWith(`/${SERIAL_LOG_FILE}`)) ?? '').split(' ').slice(2).join(' ');
  assert.equal((await stat(serialLog)).uid, NON_ROOT_UID, `owner of ${serialLog}`);
  const dir = await stat(dirname(serialLog));
  assert.deepEqual({ uid: dir.uid, mode: (dir.mode & 0o777).toString(8) }, { uid: 0, mode: '711' }, dirname(serialLog));
  const wide = await widerThanOwner(roots);
  assert.deepEqual(wide, [], `wider than owner-only:\n${all.join('\n')}`);
  assert.equal((await suite.kubectl(['delete', 'vmi', 'vm-modes', '--wait=false'])).code, 0);
  await suite.waitForPhase('vm-modes', 'Succeeded');
});
