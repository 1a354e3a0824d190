// Hotplugged volumes mounted into a launcher pod's hotplug-disks directory, with real bind
// mounts in a scratch pods dir: the attachment pod's claim found under its pod directory, its
// disk.img made at the claim's size and owned by the launcher's user, the file reachable in the
// pod's directory; a volume gone from the spec is unmounted once a Sync detached its disk; links
// on the way are refused.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chown, lstat, mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { VirtualMachineInstance } from '@podvirt/api';
import type { BlockDevice, DeviceAccess } from '../src/hotplug/device-cgroup.js';
import { HotplugMounts, splitDeviceNumber } from '../src/hotplug/hotplug-mounts.js';
import { makeVmi, quietLog } from './fixtures.js';

const LAUNCHER = 'launcher-pod-uid';
const ATTACH = 'attach-pod-uid';
const ATTACH_BLOCK = 'attach-block-pod-uid';
const VMI_UID = 'uid-1';

async function mountedUnder(dir: string): Promise<string[]> {
  const info = await readFile('/proc/self/mountinfo', 'utf8');
  return info.split('\n').map((l) => l.split(' ')[4] ?? '').filter((t) => t.startsWith(`${dir}/`));
}

function hotplugVmi(attachUid: string, phase = 'AttachedToNode', volumeMode: 'Filesystem' | 'Block' = 'Filesystem'): VirtualMachineInstance {
  const vmi = makeVmi({ phase: 'Running' });
  vmi.spec.volumes = [...(vmi.spec.volumes ?? []), { name: 'hp', persistentVolumeClaim: { claimName: 'c1', hotpluggable: true } }];
  vmi.status = {
    ...vmi.status,
    volumeStatus: [{
      name: 'hp', target: '', phase: phase as 'AttachedToNode', reason: 'SuccessfulCreate', message: '',
      hotplugVolume: { attachPodName: 'hp-volume-x', attachPodUID: attachUid },
      persistentVolumeClaimInfo: { claimName: 'c1', accessModes: ['ReadWriteOnce'], volumeMode, capacity: { storage: '4Mi' } },
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
    await hotplug.unmountAll(socket, VMI_UID);
    assert.deepEqual(await mountedUnder(join(pods, LAUNCHER)), []);
  });
  describe('block claims', () => {
    const calls: string[] = [];
    const devices: DeviceAccess = {
      allow: (vmiUid: string, sock: string, d: BlockDevice) => Promise.resolve(void calls.push(`allow ${vmiUid} ${sock === socket} b ${d.major}:${d.minor}`)),
      deny: (vmiUid: string, sock: string, d: BlockDevice) => Promise.resolve(void calls.push(`deny ${vmiUid} ${sock === socket} b ${d.major}:${d.minor}`)),
    };
    let blockHotplug: HotplugMounts;
    let node: string;

    before(async () => {
      // The claim's device as the kubelet maps it for the attachment pod: a link under its
      // volumeDevices to a device node (numbers no device uses here; nothing opens it).
      await mkdir(join(root, 'dev'));
      execFileSync('mknod', ['-m', '600', join(root, 'dev', 'loop-src'), 'b', '7', '1000']);
      await mkdir(join(pods, ATTACH_BLOCK, 'volumeDevices', 'kubernetes.io~local-volume'), { recursive: true });
      await symlink(join(root, 'dev', 'loop-src'), join(pods, ATTACH_BLOCK, 'volumeDevices', 'kubernetes.io~local-volume', 'pv-b'));
      node = join(pods, LAUNCHER, 'volumes', 'kubernetes.io~empty-dir', 'hotplug-disks', 'hp');
      blockHotplug = new HotplugMounts({ podsDir: pods, log: quietLog(), devices });
    });

    test('the device numbers split as the kernel encodes them', () => {
      assert.deepEqual(splitDeviceNumber(0x0703n), { major: 7, minor: 3 });
      assert.deepEqual(splitDeviceNumber(0x0001_0000_0083_feffn), { major: 0x103fe, minor: 0x8ff });
    });

    test('a Block claim: the device allowed for the launcher, its node made in the pod (same numbers, the launcher\'s, 0660); removed: denied and gone', async () => {
      calls.length = 0;
      const states = await blockHotplug.reconcile(hotplugVmi(ATTACH_BLOCK, 'AttachedToNode', 'Block'), socket);
      assert.equal(states.get('hp')?.phase, 'MountedToPod', states.get('hp')?.message);
      const st = await lstat(node, { bigint: true });
      assert.ok(st.isBlockDevice());
      assert.deepEqual([splitDeviceNumber(st.rdev), Number(st.uid), Number(st.gid), Number(st.mode) & 0o777], [{ major: 7, minor: 1000 }, 107, 107, 0o660]);
      assert.deepEqual(calls, [`allow ${VMI_UID} true b 7:1000`]);
      assert.deepEqual(await mountedUnder(join(pods, LAUNCHER)), [], 'no mount for a block claim');

      // Again (a restarted handler): the node is the state; nothing is made or allowed twice.
      assert.equal((await blockHotplug.reconcile(hotplugVmi(ATTACH_BLOCK, 'MountedToPod', 'Block'), socket)).get('hp')?.phase, 'MountedToPod');
      assert.equal(calls.length, 1);

      const removed = hotplugVmi(ATTACH_BLOCK, 'Ready', 'Block');
      removed.spec.volumes = (removed.spec.volumes ?? []).filter((v) => v.name !== 'hp');
      await blockHotplug.reconcile(removed, socket);
      assert.ok(blockHotplug.detachDue(socket), 'kept until a Sync detached it');
      assert.ok((await lstat(node)).isBlockDevice());
      await blockHotplug.reconcile(removed, socket, { detached: true });
      assert.equal(await lstat(node).catch(() => undefined), undefined);
      assert.deepEqual(calls, [`allow ${VMI_UID} true b 7:1000`, `deny ${VMI_UID} true b 7:1000`]);
    });

    test('the VMI gone: the node is removed even when its launcher (and cgroup) went first', async () => {
      await blockHotplug.reconcile(hotplugVmi(ATTACH_BLOCK, 'AttachedToNode', 'Block'), socket);
      const gone = new HotplugMounts({ podsDir: pods, log: quietLog(), devices: { ...devices, deny: () => Promise.reject(new Error('no launcher process')) } });
      await gone.unmountAll(socket, VMI_UID);
      assert.equal(await lstat(node).catch(() => undefined), undefined);
    });

    test('a mapped claim that is not a block device is refused by name; nothing is made', async () => {
      calls.length = 0;
      await mkdir(join(pods, 'attach-file', 'volumeDevices', 'kubernetes.io~local-volume'), { recursive: true });
      await writeFile(join(pods, 'attach-file', 'volumeDevices', 'kubernetes.io~local-volume', 'pv-f'), '');
      const state = (await blockHotplug.reconcile(hotplugVmi('attach-file', 'AttachedToNode', 'Block'), socket)).get('hp');
      assert.equal(state?.reason, 'FailedMountVolume');
      assert.match(state?.message ?? '', /pv-f is not a block device/);
      assert.equal(await lstat(node).catch(() => undefined), undefined);
      assert.deepEqual(calls, []);
    });
  });
});
