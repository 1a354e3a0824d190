// hostDisk as a new user meets it, with a VMI in the form of KubeVirt's
// examples/vmi-host-disk.yaml (a 1Gi DiskOrCreate at /var/data/disk.img):
// - on a default install (no --feature-gates) it is refused by field naming the HostDisk gate:
//   Pending, Synchronized=False FailedCreate, a Warning SyncFailed, no pod, nothing on the node;
// - with the gate on and a temp dir allowed, a path outside it and the allowed directory itself
//   are refused the same way before any pod; a path through a symlinked directory on the host
//   gets its pod (the controller cannot see the node's files) and the launcher refuses it: the
//   VMI fails with VolumePreparationFailed naming the field, and nothing is made behind the link.
// A VM running on an allowed hostDisk, and its data surviving, is vmi-persistent-disks.test.ts.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import type { VirtualMachineInstance } from '@podvirt/api';
import { NS, VmiSuite } from './vmi-stack.js';

/** KubeVirt's example, written out: a 128Mi guest whose only disk is a host disk. */
function hostDiskVmi(name: string, path: string): Record<string, unknown> {
  return {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachineInstance',
    metadata: { name, namespace: NS, labels: { special: name } },
    spec: {
      terminationGracePeriodSeconds: 0,
      domain: { resources: {}, memory: { guest: '128Mi' }, devices: { disks: [{ name: 'host-disk', disk: { bus: 'virtio' } }] } },
      volumes: [{ name: 'host-disk', hostDisk: { path, type: 'DiskOrCreate', capacity: '1Gi' } }],
    },
  };
}

/** The controller refused the VMI before any pod: Pending, the condition and the Event say why. */
async function refusedBeforeAnyPod(suite: VmiSuite, name: string, message: RegExp): Promise<VirtualMachineInstance> {
  const vmi = await suite.eventually(`VMI ${name} refused`, async () => {
    const v = await suite.vmi(name);
    return v?.status?.conditions?.some((c) => c.type === 'Synchronized' && c.status === 'False') === true ? v : undefined;
  });
  assert.equal(vmi.status?.phase, 'Pending');
  const sync = vmi.status?.conditions?.find((c) => c.type === 'Synchronized');
  assert.equal(sync?.reason, 'FailedCreate');
  assert.match(sync?.message ?? '', message);
  const warning = await suite.eventually(`SyncFailed Event of ${name}`, async () => (await suite.events(name)).find((e) => e.reason === 'SyncFailed'));
  assert.equal(warning.type, 'Warning');
  assert.match(warning.message ?? '', message);
  assert.deepEqual(await suite.podsOf(vmi), [], 'no launcher pod was created');
  return vmi;
}

async function remove(suite: VmiSuite, name: string): Promise<void> {
  await suite.kubectl(['delete', 'vmi', name, '--wait=false']);
  await suite.waitForGone(name);
}

describe('hostDisk on a default install: off', () => {
  const suite = VmiSuite.setUp();

  test('KubeVirt\'s vmi-host-disk example is refused naming the HostDisk gate, and leaves nothing on the node', async () => {
    const hadDir = existsSync('/var/data');
    const hadDisk = existsSync('/var/data/disk.img');
    await suite.apply(hostDiskVmi('vmi-host-disk', '/var/data/disk.img'));
    await refusedBeforeAnyPod(suite, 'vmi-host-disk', /spec\.volumes\[0\]\.hostDisk: Forbidden: HostDisk feature gate is not enabled \(podvirt-controller --feature-gates=HostDisk\)/);
    assert.equal(existsSync('/var/data'), hadDir, '/var/data neither made nor removed');
    assert.equal(existsSync('/var/data/disk.img'), hadDisk, 'no disk image made');
    assert.deepEqual(await suite.core.listNamespacedPod({ namespace: NS }).then((l) => l.items.map((p) => p.metadata?.name)), [], 'no pod at all');
    await remove(suite, 'vmi-host-disk');
  });
});

describe('hostDisk with the gate on and one directory allowed', () => {
  let base = '';
  let allowed: string;
  let outside: string;
  const suite = VmiSuite.setUp({
    before: async () => {
      base = await mkdtemp(join(tmpdir(), 'podvirt-hostdisk-gate-'));
      allowed = join(base, 'allowed');
      outside = join(base, 'outside');
      await mkdir(allowed);
      await mkdir(outside);
      await symlink(outside, join(allowed, 'link'));
      return { controllerArgs: ['--feature-gates=HostDisk', `--host-disk-allowed-dir=${allowed}`] };
    },
    after: async () => {
      if (base !== '') await rm(base, { recursive: true, force: true });
    },
  });

  test('a path outside the allowed directory, and the allowed directory itself, are refused by field before any pod', async () => {
    await suite.apply(hostDiskVmi('hd-outside', '/var/data/disk.img'), hostDiskVmi('hd-listed-dir', allowed));
    await refusedBeforeAnyPod(suite, 'hd-outside', new RegExp(`spec\\.volumes\\[0\\]\\.hostDisk\\.path: Forbidden: "/var/data/disk\\.img" is not inside a directory allowed for host disks; allowed: ${allowed}`));
    await refusedBeforeAnyPod(suite, 'hd-listed-dir', /spec\.volumes\[0\]\.hostDisk\.path: Forbidden: ".*" is an allowed directory itself; name a disk image file inside it/);
    assert.deepEqual(await readdir(allowed), ['link']);
    await Promise.all([remove(suite, 'hd-outside'), remove(suite, 'hd-listed-dir')]);
  });

  test('a path through a symlinked directory on the host: the launcher refuses it by field, the VMI fails, nothing is made behind the link', async () => {
    await suite.apply(hostDiskVmi('hd-symlink', join(allowed, 'link', 'disk.img')));
    const failed = await suite.waitForPhase('hd-symlink', 'Failed');
    assert.equal(failed.status?.reason, 'VolumePreparationFailed');
    const warning = await suite.eventually('the Stopped Event', async () => (await suite.events('hd-symlink')).find((e) => e.reason === 'Stopped' && e.type === 'Warning'));
    assert.match(warning.message ?? '', /spec\.volumes\[0\]\.hostDisk: .*goes through a symbolic link/);
    assert.deepEqual(await readdir(outside), [], 'nothing created through the link');
    await remove(suite, 'hd-symlink');
    await suite.waitForPodsGone(failed);
  });
});
