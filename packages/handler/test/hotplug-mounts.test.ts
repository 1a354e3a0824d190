// Hotplugged volumes mounted into a launcher pod's hotplug-disks directory, with real bind
// mounts in a scratch pods dir: the attachment pod's claim found under its pod directory, its
// disk.img made at the claim's size and owned by the launcher's user, the file reachable in the
// pod's directory; a volume gone from the spec is unmounted once a Sync detached its disk; links
// on the way are refused.
import assert from 'node:assert/strict';
import { chown, lstat, mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { VirtualMachineInstance } from '@podvirt/api';
import { HotplugMounts } from '../src/hotplug/hotplug-mounts.js';
import { makeVmi, quietLog } from './fixtures.js';

const LAUNCHER = 'launcher-pod-uid';
const ATTACH = 'attach-pod-uid';

async function mountedUnder(dir: string): Promise<string[]> {
  const info = await readFile('/proc/self/mountinfo', 'utf8');
  return info.split('\n').map((l) => l.split(' ')[4] ?? '').filter((t) => t.startsWith(`${dir}/`));
}

function hotplugVmi(attachUid: string, phase = 'AttachedToNode'): VirtualMachineInstance {
  const vmi = makeVmi({ phase: 'Running' });
  vmi.spec.volumes = [...(vmi.spec.volumes ?? []), { name: 'hp', persistentVolumeClaim: { claimName: 'c1', hotpluggable: true } }];
  vmi.status = {
    ...vmi.status,
    volumeStatus: [{
      name: 'hp', target: '', phase: phase as 'AttachedToNode', reason: 'SuccessfulCreate', message: '',
      hotplugVolume: { attachPodName: 'hp-volume-x', attachPodUID: attachUid },
      persistentVolumeClaimInfo: { claimName: 'c1', accessModes: ['ReadWriteOnce'], volumeMode: 'Filesystem', capacity: { storage: '4Mi' } },
    }],
  };
  return vmi;
}

describe('hotplug mounts', { skip: process.getuid?.() !== 0 ? 'needs root (bind mounts)' : false }, () => {
  let root: string;
  let pods: string;
  let socket: string;
  let claim: string;
  let hotplug: HotplugMounts;

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'hotplug-mounts-'));
    pods = join(root, 'pods');
    await mkdir(join(pods, LAUNCHER, 'volumes', 'kubernetes.io~empty-dir', 'hotplug-disks'), { recursive: true });
    await mkdir(join(pods, LAUNCHER, 'volumes', 'kubernetes.io~empty-dir', 'sockets'), { recursive: true });
    socket = join(pods, LAUNCHER, 'volumes', 'kubernetes.io~empty-dir', 'sockets', 'launcher-sock');
    await writeFile(socket, '');
    await chown(socket, 107, 107);
    claim = join(pods, ATTACH, 'volumes', 'kubernetes.io~local-volume', 'pv-1');
    await mkdir(claim, { recursive: true });
    hotplug = new HotplugMounts({ podsDir: pods, log: quietLog() });
  });

  after(async () => {
    for (const point of (await mountedUnder(root)).reverse()) await import('node:child_process').then((cp) => cp.execFileSync('umount', ['--lazy', point]));
    assert.deepEqual(await mountedUnder(root), []);
    await rm(root, { recursive: true, force: true });
  });

  test('mounts the claim\'s disk.img (made at the claim\'s size) into the launcher pod, owned by the launcher, and unmounts it once removed', async () => {
    const states = await hotplug.reconcile(hotplugVmi(ATTACH), socket);
    assert.equal(states.get('hp')?.phase, 'MountedToPod', states.get('hp')?.message);
    const target = join(pods, LAUNCHER, 'volumes', 'kubernetes.io~empty-dir', 'hotplug-disks', 'hp.img');
    assert.deepEqual(await mountedUnder(join(pods, LAUNCHER)), [target]);
    const image = await stat(join(claim, 'disk.img'));
    assert.equal(image.size, 4 * 1024 * 1024);
    const seen = await stat(target);
    assert.deepEqual([seen.ino, seen.uid, seen.gid, seen.mode & 0o777], [image.ino, 107, 107, 0o660]);

    // Again (a resync, a restarted handler): the mount table says it is done; nothing doubles.
    assert.equal((await hotplug.reconcile(hotplugVmi(ATTACH, 'MountedToPod'), socket)).get('hp')?.phase, 'MountedToPod');
    assert.equal((await mountedUnder(join(pods, LAUNCHER))).length, 1);

    const removed = hotplugVmi(ATTACH, 'MountedToPod');
    removed.spec.volumes = (removed.spec.volumes ?? []).filter((v) => v.name !== 'hp');
    // Until a Sync detached its disk from the domain, it stays mounted and a Sync is due.
    assert.equal(hotplug.detachDue(socket), false);
    await hotplug.reconcile(removed, socket);
    assert.deepEqual(await mountedUnder(join(pods, LAUNCHER)), [target], 'kept until detached');
    assert.equal(hotplug.detachDue(socket), true);
    await hotplug.reconcile(removed, socket, { detached: true });
    assert.equal(hotplug.detachDue(socket), false);
    assert.deepEqual(await mountedUnder(join(pods, LAUNCHER)), []);
    assert.equal(await lstat(target).catch(() => undefined), undefined, 'target file removed');
    assert.equal((await stat(join(claim, 'disk.img'))).size, 4 * 1024 * 1024, 'the claim keeps its disk');
  });

  test('a claim reached through a symbolic link is refused by name; nothing is mounted', async () => {
    const linked = 'attach-linked';
    await mkdir(join(pods, linked, 'volumes', 'kubernetes.io~local-volume'), { recursive: true });
    await symlink(claim, join(pods, linked, 'volumes', 'kubernetes.io~local-volume', 'pv-2'));
    const state = (await hotplug.reconcile(hotplugVmi(linked), socket)).get('hp');
    assert.equal(state?.phase, 'AttachedToNode');
    assert.equal(state?.reason, 'FailedMountVolume');
    assert.match(state?.message ?? '', /pv-2 is a symbolic link/);
    assert.deepEqual(await mountedUnder(join(pods, LAUNCHER)), []);
  });

  test('an attachment pod that shows no claim yet waits, by name', async () => {
    const state = (await hotplug.reconcile(hotplugVmi('attach-empty'), socket)).get('hp');
    assert.equal(state?.reason, 'FailedMountVolume');
    assert.match(state?.message ?? '', /shows no claim on this node yet/);
  });

  test('the VMI gone: every hotplugged disk of the pod is unmounted', async () => {
    await hotplug.reconcile(hotplugVmi(ATTACH), socket);
    assert.equal((await mountedUnder(join(pods, LAUNCHER))).length, 1);
    await hotplug.unmountAll(socket);
    assert.deepEqual(await mountedUnder(join(pods, LAUNCHER)), []);
  });
});
