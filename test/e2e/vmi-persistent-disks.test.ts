// Disks that outlive the VM, through the controller, the handler, the testbed kubelet and a real
// guest. The test guest's durability switch (podvirt.persist=vdb) mounts its second virtio disk,
// prints the boot_ids earlier boots left there, appends its own, fsyncs and prints it.
// - hostDisk: DiskOrCreate makes the image at its capacity in the host directory the pod mounts;
//   a later VMI opens it as Disk and finds the marker; two VMIs run on one `shared` host disk.
// - PVC: a marker written and synced survives deleting the VMI, a handler restart, and qemu
//   SIGKILLed right after the fsync: each new VMI on the claim finds every earlier marker.
// - a VirtualMachine on a claim of the default StorageClass: restarted with podvirtctl, its new
//   VMI finds what the old one synced (a restart keeps the VM's disks).
// - block PVC (volumeMode Block): the kubelet gives the launcher the loop device at /dev/<volume>,
//   the guest's marker lands on the device and the next VMI on the claim finds it.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { VirtualMachineInstance } from '@podvirt/api';
import { BOOT_TIMEOUT_MS, guestVmi, NS, VmiSuite } from './vmi-stack.js';

const MIB = 1024 * 1024;
const run = promisify(execFile);
const CTL = fileURLToPath(new URL('../../../packages/ctl/bin/podvirtctl.js', import.meta.url));
const VMI_API = { group: 'kubevirt.io', version: 'v1', namespace: NS, plural: 'virtualmachineinstances' };

type Vmi = Record<string, unknown>;

/** The guest VMI plus a second virtio disk `persist` on `source`, with the durability switch when `marker`. */
function persistVmi(suite: VmiSuite, name: string, source: Record<string, unknown>, o: { marker?: boolean; shareable?: boolean } = {}): Vmi {
  const vmi = guestVmi(suite.guest, name, o.marker === false ? {} : { extraKernelArgs: 'podvirt.persist=vdb' });
  const spec = vmi['spec'] as { domain: { devices: { disks: unknown[] } }; volumes: unknown[] };
  spec.domain.devices.disks.push({ name: 'persist', disk: { bus: 'virtio' }, ...(o.shareable === true ? { shareable: true } : {}) });
  spec.volumes.push({ name: 'persist', ...source });
  return vmi;
}

/** Waits for a whole console line matching `pattern` (a line still being written does not count). */
async function consoleLine(suite: VmiSuite, vmi: VirtualMachineInstance, pattern: RegExp): Promise<RegExpExecArray> {
  const pod = Object.keys(vmi.status?.activePods ?? {})[0] ?? '';
  const log = suite.serialLog(vmi, pod);
  return suite.eventually(`console ${pattern} of ${vmi.metadata.name ?? ''}`, async () => {
    const text = await readFile(log, 'utf8').catch(() => '');
    for (const line of text.split('\n').slice(0, -1)) {
      const m = pattern.exec(line.replace(/\r$/, ''));
      if (m !== null) return m;
    }
    return undefined;
  }, BOOT_TIMEOUT_MS);
}

/** Starts the VMI and returns what its guest found on the disk and the boot_id it wrote. */
async function bootAndMark(suite: VmiSuite, vmi: Vmi): Promise<{ running: VirtualMachineInstance; found: string[]; wrote: string }> {
  const name = (vmi['metadata'] as { name: string }).name;
  await suite.apply(vmi);
  const running = await suite.waitForPhase(name, 'Running');
  const found = (await consoleLine(suite, running, /^PODVIRT-GUEST-PERSIST found=(.*)$/))[1]?.split(',').filter((s) => s !== '') ?? [];
  const wrote = (await consoleLine(suite, running, /^PODVIRT-GUEST-PERSIST wrote=([0-9a-f-]{36})$/))[1] ?? '';
  return { running, found, wrote };
}

describe('disks that outlive the VM', () => {
  let hostDir = '';
  const suite = VmiSuite.setUp({
    before: async () => {
      hostDir = await mkdtemp(join(tmpdir(), 'podvirt-hostdisk-'));
      // KubeVirt's HostDisk gate on and the test's own directory allowed, as an admin would.
      return { controllerArgs: ['--feature-gates=HostDisk', `--host-disk-allowed-dir=${hostDir}`] };
    },
    after: async () => {
      if (hostDir !== '') await rm(hostDir, { recursive: true, force: true });
    },
  });

  const remove = async (name: string): Promise<void> => {
    await suite.custom.deleteNamespacedCustomObject({ ...VMI_API, name });
    await suite.waitForGone(name);
  };

  // hostDisk, the VM's claim and the block claim are separate disks and VMIs: they run at once,
  // their boots overlapping. The PVC test restarts the handler, so it runs alone, after them.
  describe('three disks at once', { concurrency: true }, () => {
    test('hostDisk: DiskOrCreate makes the image in the host directory; Disk reopens it; two VMIs share a shared one', async () => {
      const path = join(hostDir, 'disk.img');
      const first = await bootAndMark(suite, persistVmi(suite, 'vm-hd-create', { hostDisk: { path, type: 'DiskOrCreate', capacity: '64Mi' } }));
      assert.deepEqual(first.found, [], 'a new disk holds no marker');
      assert.equal((await stat(path)).size, 64 * MIB, 'created at its capacity, in the host directory');
      assert.ok((await readFile(path)).includes(first.wrote), 'the synced marker is in the host file');
      await remove('vm-hd-create');

      const shared = { hostDisk: { path, type: 'Disk', shared: true } };
      const reader = bootAndMark(suite, persistVmi(suite, 'vm-hd-a', shared, { shareable: true }));
      await suite.apply(persistVmi(suite, 'vm-hd-b', shared, { marker: false, shareable: true }));
      const a = await reader;
      assert.deepEqual(a.found, [first.wrote], 'the Disk holds the marker of the VMI that created it');
      const b = await suite.waitForPhase('vm-hd-b', 'Running');
      await suite.waitForGuestReady(b);
      assert.equal((await suite.vmi('vm-hd-a'))?.status?.phase, 'Running', 'both VMIs run on the shared disk');
      await Promise.all([remove('vm-hd-a'), remove('vm-hd-b')]);
    });

    test('a VirtualMachine restarted with podvirtctl keeps its claim: the new VMI finds what the old one synced', async () => {
      const name = 'vm-keeps-disk';
      // No storageClassName: the testbed's default StorageClass provisions it, as on kind or minikube.
      await suite.apply({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'vm-disk', namespace: NS },
        spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '64Mi' } } } });
      const template = persistVmi(suite, name, { persistentVolumeClaim: { claimName: 'vm-disk' } }) as { spec: unknown };
      await suite.apply({ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', metadata: { name, namespace: NS }, spec: { runStrategy: 'Always', template: { spec: template.spec } } });
      const first = await suite.waitForPhase(name, 'Running');
      assert.deepEqual((await consoleLine(suite, first, /^PODVIRT-GUEST-PERSIST found=(.*)$/))[1], '', 'a new claim holds no marker');
      const wrote = (await consoleLine(suite, first, /^PODVIRT-GUEST-PERSIST wrote=([0-9a-f-]{36})$/))[1] ?? '';

      await run(process.execPath, [CTL, 'restart', 'vm', name, '--kubeconfig', suite.stack.kubeconfigPath], { timeout: 60_000 });
      const second = await suite.eventually(`a new VMI of VM ${name} Running`, async () => {
        const vmi = await suite.vmi(name);
        return vmi?.status?.phase === 'Running' && vmi.metadata.uid !== first.metadata.uid ? vmi : undefined;
      }, BOOT_TIMEOUT_MS);
      const found = (await consoleLine(suite, second, /^PODVIRT-GUEST-PERSIST found=(.*)$/))[1]?.split(',').filter((s) => s !== '') ?? [];
      assert.deepEqual(found, [wrote], 'the restarted VM found on its claim what it synced before the restart');

      assert.equal((await suite.kubectl(['delete', 'vm', name, '--timeout=120s'])).code, 0);
      await suite.waitForGone(name);
      await suite.waitForPodsGone(second);
    });

    test('block PVC: the device reaches the guest through the pod; what it wrote is on the device for the next VMI', async () => {
      await suite.apply(
        { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name: 'local' }, provisioner: 'podvirt.io/testbed-local', reclaimPolicy: 'Delete' },
        { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'durable-block', namespace: NS },
          spec: { accessModes: ['ReadWriteOnce'], volumeMode: 'Block', storageClassName: 'local', resources: { requests: { storage: '32Mi' } } } },
      );
      const claim = { persistentVolumeClaim: { claimName: 'durable-block' } };
      const one = await bootAndMark(suite, persistVmi(suite, 'vm-blk-1', claim));
      assert.deepEqual(one.found, []);
      const pvc = await suite.core.readNamespacedPersistentVolumeClaim({ namespace: NS, name: 'durable-block' });
      const device = (await suite.core.readPersistentVolume({ name: pvc.spec?.volumeName ?? '' })).spec?.local?.path ?? '';
      assert.ok((await stat(device)).isBlockDevice(), `the claim's PV is a block device (${device})`);
      assert.ok((await readFile(device)).includes(one.wrote), 'the synced marker is on the device');
      await remove('vm-blk-1');
      const two = await bootAndMark(suite, persistVmi(suite, 'vm-blk-2', claim));
      assert.deepEqual(two.found, [one.wrote]);
      await remove('vm-blk-2');
    });
  });

  test('PVC: what the guest synced survives deleting the VMI, a handler restart and a qemu SIGKILL', async () => {
    await suite.apply(
      { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name: 'local' }, provisioner: 'podvirt.io/testbed-local', reclaimPolicy: 'Delete' },
      { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'durable', namespace: NS },
        spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'local', resources: { requests: { storage: '64Mi' } } } },
    );
    const claim = { persistentVolumeClaim: { claimName: 'durable' } };
    const one = await bootAndMark(suite, persistVmi(suite, 'vm-dur-1', claim));
    assert.deepEqual(one.found, []);
    await remove('vm-dur-1');

    // Deleted and recreated: the marker is there. Then the handler restarts under the running VM.
    const two = await bootAndMark(suite, persistVmi(suite, 'vm-dur-2', claim));
    assert.deepEqual(two.found, [one.wrote], 'a new VMI on the claim finds the marker of the deleted one');
    const qemuBefore = await suite.qemuPids('vm-dur-2');
    suite.stack.handler.kill('SIGKILL');
    await suite.stack.restartHandler();
    assert.deepEqual(await suite.qemuPids('vm-dur-2'), qemuBefore, 'the VM runs on through the handler restart');
    await remove('vm-dur-2');

    // qemu SIGKILLed right after the guest's fsync: nothing it synced is lost.
    const three = await bootAndMark(suite, persistVmi(suite, 'vm-dur-3', claim));
    assert.deepEqual(three.found, [one.wrote, two.wrote]);
    const pids = await suite.qemuPids('vm-dur-3');
    assert.equal(pids.length, 1);
    process.kill(pids[0]!, 'SIGKILL');
    await suite.eventually('vm-dur-3 final after qemu SIGKILL', async () => {
      const phase = (await suite.vmi('vm-dur-3'))?.status?.phase;
      return phase === 'Failed' || phase === 'Succeeded' ? phase : undefined;
    }, BOOT_TIMEOUT_MS);
    await remove('vm-dur-3');

    const four = await bootAndMark(suite, persistVmi(suite, 'vm-dur-4', claim));
    assert.deepEqual(four.found, [one.wrote, two.wrote, three.wrote], 'every synced marker survived');
    await remove('vm-dur-4');
  });
});
