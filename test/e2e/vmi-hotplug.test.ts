// Volume hotplug through the real controller, the testbed kubelet, podvirt-handler and podvirtctl
// on a running test guest (both control planes): `podvirtctl addvolume` writes the hotpluggable
// claim into the VMI through the API server, the controller runs its attachment pod `hp-volume-*`
// on the VMI's node (owned by the VMI, mounting the claim), the handler bind-mounts the claim's
// disk.img into the launcher pod's hotplug-disks directory (MountedToPod; the launcher's
// container sees the file through HostToContainer propagation), the launcher attaches it to the
// running domain (Ready) and the guest sees /dev/sd* with the serial and writes a marker; a
// clashing name is refused by its flag and changes nothing, a disk on the virtio bus by admission
// naming the field, and so by KubeVirt's addvolume subresource (through kube-apiserver and
// podvirt-api); a claim that does not exist, added through that subresource, waits Pending, its
// reason in the status and an Event; `removevolume` detaches it (gone from
// the guest), unmounts it and takes the pod and the status entry away; removed while the handler
// is down, the restarted handler detaches it before unmounting it; the handler killed between
// mount and attach (the launcher stalled) is finished by the restarted handler with no stray
// mount; a Block claim hot-plugged (the attachment pod's volumeDevice, a device node the handler
// makes in the launcher pod, a block disk of the domain) takes a marker and is removed (the node
// goes); a new VMI booting with both claims reads the markers, and while it runs the first claim
// (ReadWriteOnce) hot-plugged again waits (PvcInUse, a Warning Event, no attachment pod) and
// attaches once that VMI goes; deleting the VMI while a volume attaches leaves no attachment pod
// and no mount. A VMI that is not Running (missing, or Pending) gets no volume.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { lstat, readFile, realpath } from 'node:fs/promises';
import { promisify } from 'node:util';
import { describe, test } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import { HOTPLUG_VOLUME_LABEL, type VolumeStatus } from '@podvirt/api';
import { KubeApiError, KubeClient, readKubeconfigFile } from '@podvirt/kube-runtime';
import { DemoShell } from '../testbed/demo/demo-shell.js';
import { repoRoot } from '../testbed/guest/repo-root.js';
import { BOOT_TIMEOUT_MS, guestVmi, launcherPid, NS, VmiSuite } from './vmi-stack.js';

const run = promisify(execFile);
const MARKER = 'podvirt-hotplug-marker-7f3a';


const VMI_API = { group: 'kubevirt.io', version: 'v1', namespace: NS, plural: 'virtualmachineinstances' };

describe('volume hotplug', () => {
  const suite = VmiSuite.setUp();

  const ctl = (...args: string[]): ReturnType<VmiSuite['podvirtctl']> => suite.podvirtctl(...args);

  const attachmentPods = async (): Promise<V1Pod[]> =>
    (await suite.core.listNamespacedPod({ namespace: NS, labelSelector: 'kubevirt.io=hotplug-disk' })).items.filter((p) => p.metadata?.deletionTimestamp == null);

  /** Hotplugged disks mounted on this stack's node (this process's mount table is the host's). */
  const hotplugMounts = async (): Promise<string[]> => {
    const pods = await realpath(suite.stack.podsDir);
    return (await readFile('/proc/self/mountinfo', 'utf8')).split('\n').map((l) => l.split(' ')[4] ?? '').filter((t) => t.startsWith(`${pods}/`) && t.includes('/hotplug-disks/'));
  };

  const quiet = { step: () => undefined, detail: () => undefined };
  /** A command typed on the guest's serial console with podvirtctl console; its answer. */
  const onConsole = (vmi: string, command: string, answer: RegExp): Promise<string> =>
    new DemoShell({ out: quiet, env: process.env, node: process.execPath, repoRoot: repoRoot(import.meta.url), kubeconfig: suite.stack.kubeconfigPath, nodeApiSocket: suite.stack.nodeApiSocket }).console(vmi, command, answer);

  const volumeStatus = async (vmi: string, volume: string): Promise<VolumeStatus | undefined> =>
    (await suite.vmi(vmi))?.status?.volumeStatus?.find((s) => s.name === volume);

  test('a claim hot-plugged into a running guest gets its attachment pod on the node; removal and deletion take it away', async (t) => {
    const name = 'vm-hotplug';
    await suite.apply(
      // No storageClassName: the default StorageClass provisions it, on both control planes.
      ...['hp-claim', 'hp-claim2', 'hp-claim3'].map((claim) => ({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: claim, namespace: NS }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '32Mi' } } } })),
      // A block claim: the testbed's provisioner backs it with a loop device.
      { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'hp-bclaim', namespace: NS }, spec: { accessModes: ['ReadWriteOnce'], volumeMode: 'Block', resources: { requests: { storage: '32Mi' } } } },
      guestVmi(suite.guest, name),
    );
    const running = await suite.waitForPhase(name, 'Running');
    await suite.waitForGuestReady(running);

    const addedAt = performance.now();
    const added = await ctl('addvolume', 'vmi', name, '-n', NS, '--volume-name=hp-data', '--claim=hp-claim', '--serial=HP1');
    assert.equal(added.code, 0, added.stderr);
    const spec = (await suite.vmi(name))?.spec;
    assert.deepEqual(spec?.volumes?.find((v) => v.name === 'hp-data'), { name: 'hp-data', persistentVolumeClaim: { claimName: 'hp-claim', hotpluggable: true } });
    assert.deepEqual(spec?.domain.devices.disks?.find((d) => d.name === 'hp-data'), { name: 'hp-data', disk: { bus: 'scsi' }, serial: 'HP1' });

    // Mounted into the pod (MountedToPod), then a disk of the running domain (Ready).
    const attached = await suite.eventually('volume hp-data Ready', async () => {
      const s = await volumeStatus(name, 'hp-data');
      return s?.phase === 'Ready' ? s : undefined;
    }, BOOT_TIMEOUT_MS);
    assert.equal(attached.reason, 'VolumeReady', attached.message);
    // A figure, not a bound: the status is polled (BOOT_TIMEOUT_MS is the only limit).
    t.diagnostic(`addvolume → Ready: ${Math.round(performance.now() - addedAt)} ms`);
    // In the launcher's own mount namespace: the claim's disk.img, at the claim's size, the launcher's.
    const pid = await launcherPid(running.metadata.uid ?? '');
    assert.ok(pid !== undefined, 'launcher process');
    const seen = await run('nsenter', ['--target', String(pid), '--mount', 'stat', '-L', '-c', '%s %a', '/var/run/kubevirt/hotplug-disks/hp-data.img']);
    assert.equal(seen.stdout.trim(), `${32 * 1024 * 1024} 660`);
    assert.equal((await hotplugMounts()).filter((m) => m.endsWith('/hotplug-disks/hp-data.img')).length, 1, 'one mount on the node');
    const [pod, ...others] = await attachmentPods();
    assert.equal(others.length, 0, 'one attachment pod');
    assert.match(pod?.metadata?.name ?? '', /^hp-volume-/);
    assert.deepEqual(attached.hotplugVolume, { attachPodName: pod?.metadata?.name, attachPodUID: pod?.metadata?.uid });
    assert.equal(pod?.spec?.nodeName, running.status?.nodeName, 'on the VMI\'s node');
    assert.deepEqual(pod?.metadata?.ownerReferences?.map((r) => [r.kind, r.uid]), [['VirtualMachineInstance', running.metadata.uid]]);
    assert.equal(pod?.status?.phase, 'Running');
    assert.ok((await suite.events(name)).some((e) => e.reason === 'SuccessfulCreate' && e.message?.includes(pod?.metadata?.name ?? '?') === true));

    // The guest sees a new scsi disk with the serial, and writes a marker to it.
    const disk = /hp-disk=(sd[a-z]+) serial=\S*HP1/.exec(await onConsole(name,
      'for d in /sys/block/sd*; do echo "hp-disk=${d##*/} serial=$(tr -dc A-Za-z0-9 < $d/device/vpd_pg80)"; done', /hp-disk=sd[a-z]+ serial=\S*HP1/))?.[1];
    assert.ok(disk !== undefined, 'the hotplugged disk in the guest');
    await onConsole(name, `echo ${MARKER} | dd of=/dev/${disk} bs=512 conv=fsync 2>/dev/null && sync && echo marker=$((6 * 7))`, /marker=42/);

    const clash = await ctl('addvolume', 'vmi', name, '-n', NS, '--volume-name=hp-data', '--claim=other');
    assert.equal(clash.code, 1);
    assert.match(clash.stderr, /--volume-name: Duplicate value/);
    const bus = await ctl('addvolume', 'vmi', name, '-n', NS, '--volume-name=Bad_Name');
    assert.equal(bus.code, 2);
    assert.match(bus.stderr, /invalid --volume-name/);
    // A disk on another bus is refused by podvirt-api's admission naming the field; nothing changes.
    const before = (await suite.vmi(name))?.spec;
    const at = before?.domain.devices.disks?.length ?? 0;
    const virtio = await suite.kubectl(['patch', 'vmi', name, '-n', NS, '--type=json', '-p', JSON.stringify([
      { op: 'add', path: '/spec/domain/devices/disks/-', value: { name: 'hp-virtio', disk: { bus: 'virtio' } } },
      { op: 'add', path: '/spec/volumes/-', value: { name: 'hp-virtio', persistentVolumeClaim: { claimName: 'hp-claim', hotpluggable: true } } },
    ])]);
    assert.notEqual(virtio.code, 0);
    assert.match(virtio.stderr, new RegExp(`spec\\.domain\\.devices\\.disks\\[${at}\\]\\.disk\\.bus: Unsupported value: "virtio"`));
    assert.deepEqual((await suite.vmi(name))?.spec, before);
    // KubeVirt's addvolume subresource through kube-apiserver's aggregation (a PUT of
    // AddVolumeOptions to podvirt-api): the same rules; this time a claim that does not exist.
    const kube = await KubeClient.create(await readKubeconfigFile(suite.stack.kubeconfigPath));
    t.after(() => kube.close());
    const subresource = (body: Record<string, unknown>): Promise<string> => kube.request({ method: 'PUT', path: `/apis/subresources.kubevirt.io/v1/namespaces/${NS}/virtualmachineinstances/${name}/addvolume`, body })
      .then(() => 'accepted', (err: unknown) => (err instanceof KubeApiError ? `${err.status} ${err.message}` : Promise.reject(err)));
    const missingClaim = { name: 'hp-missing', disk: { disk: { bus: 'scsi' } }, volumeSource: { persistentVolumeClaim: { claimName: 'no-such-claim' } } };
    assert.match(await subresource({ ...missingClaim, disk: { disk: { bus: 'virtio' } } }), /^400 .*disk\.disk\.bus: Unsupported value: "virtio"/);
    assert.deepEqual((await suite.vmi(name))?.spec, before);
    // The volume waits, Pending with the reason named, and an Event says so; no attachment pod is
    // made for it; removed again, its entry goes.
    assert.equal(await subresource(missingClaim), 'accepted');
    const waiting = await suite.eventually('hp-missing Pending', async () => {
      const s = await volumeStatus(name, 'hp-missing');
      return s?.reason === 'FailedPvcNotFound' ? s : undefined;
    }, BOOT_TIMEOUT_MS);
    assert.equal(waiting.phase, 'Pending');
    assert.match(waiting.message ?? '', /no-such-claim does not exist/);
    await suite.eventually('its Event', async () => ((await suite.events(name)).some((e) => e.reason === 'FailedPvcNotFound' && e.message?.includes('volume hp-missing') === true) ? true : undefined));
    assert.equal((await attachmentPods()).length, 1, 'no attachment pod for it');
    assert.equal((await ctl('removevolume', 'vmi', name, '-n', NS, '--volume-name=hp-missing')).code, 0);
    await suite.eventually('hp-missing entry gone', async () => ((await volumeStatus(name, 'hp-missing')) === undefined ? true : undefined));
    assert.equal((await suite.vmi(name))?.status?.phase, 'Running', 'the VMI runs on');

    const removedAt = performance.now();
    const removed = await ctl('removevolume', 'vmi', name, '-n', NS, '--volume-name=hp-data');
    assert.equal(removed.code, 0, removed.stderr);
    await suite.eventually('attachment pod gone, volume status cleared, unmounted', async () =>
      (await attachmentPods()).length === 0 && (await volumeStatus(name, 'hp-data')) === undefined && (await hotplugMounts()).length === 0 ? true : undefined, BOOT_TIMEOUT_MS);
    t.diagnostic(`removevolume → unmounted, pod and status entry gone: ${Math.round(performance.now() - removedAt)} ms`);
    // Gone from the guest.
    const blocks = /blocks=([a-z0-9,]+,)/.exec(await onConsole(name, 'echo blocks=$(ls /sys/block | tr "\\n" ,)', /blocks=[a-z0-9,]+,/))?.[1] ?? '';
    assert.ok(!blocks.split(',').includes(disk), `${disk} left the guest (${blocks})`);

    // Added again, then removed while the handler is down: the controller takes the attachment pod
    // and the status entry away meanwhile, the disk stays mounted (the domain holds it); the
    // restarted handler finds the mount, has the launcher detach the disk, then unmounts it.
    const addAgain = async (): Promise<void> => {
      assert.equal((await ctl('addvolume', 'vmi', name, '-n', NS, '--volume-name=hp-data', '--claim=hp-claim')).code, 0);
      await suite.eventually('attached again', async () => ((await volumeStatus(name, 'hp-data'))?.phase === 'Ready' ? true : undefined), BOOT_TIMEOUT_MS);
    };
    await addAgain();
    suite.stack.handler.kill('SIGKILL');
    assert.equal((await ctl('removevolume', 'vmi', name, '-n', NS, '--volume-name=hp-data')).code, 0);
    await suite.eventually('attachment pod and status entry gone without the handler', async () =>
      (await attachmentPods()).length === 0 && (await volumeStatus(name, 'hp-data')) === undefined ? true : undefined, BOOT_TIMEOUT_MS);
    assert.equal((await hotplugMounts()).length, 1, 'still mounted: nobody detached the disk yet');
    await suite.stack.restartHandler();
    await suite.eventually('unmounted by the restarted handler', async () => ((await hotplugMounts()).length === 0 ? true : undefined), BOOT_TIMEOUT_MS);
    const left = /blocks=([a-z0-9,]+,)/.exec(await onConsole(name, 'echo blocks=$(ls /sys/block | tr "\\n" ,)', /blocks=[a-z0-9,]+,/))?.[1] ?? '';
    assert.ok(!left.split(',').some((b) => b.startsWith('sd')), `no scsi disk left in the guest (${left})`);

    // The handler killed between mount and attach: the launcher is stalled (SIGSTOP; qemu runs
    // on), so the handler mounts the volume (MountedToPod) but its Sync that would attach the
    // disk cannot finish; the handler is SIGKILLed there, the launcher continued, and the
    // restarted handler finds the mount and attaches the disk: Ready, one mount, in the guest.
    process.kill(pid, 'SIGSTOP');
    try {
      assert.equal((await ctl('addvolume', 'vmi', name, '-n', NS, '--volume-name=hp-more', '--claim=hp-claim2', '--serial=HP2')).code, 0);
      await suite.eventually('hp-more MountedToPod, the launcher stalled', async () => ((await volumeStatus(name, 'hp-more'))?.phase === 'MountedToPod' ? true : undefined), BOOT_TIMEOUT_MS);
      suite.stack.handler.kill('SIGKILL');
      await suite.stack.handler.exited;
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    assert.equal((await hotplugMounts()).filter((m) => m.endsWith('/hotplug-disks/hp-more.img')).length, 1, 'mounted before the kill');
    await suite.stack.restartHandler();
    await suite.eventually('hp-more Ready after the restart', async () => ((await volumeStatus(name, 'hp-more'))?.phase === 'Ready' ? true : undefined), BOOT_TIMEOUT_MS);
    assert.deepEqual((await hotplugMounts()).map((m) => m.slice(m.lastIndexOf('/') + 1)), ['hp-more.img'], 'one mount, nothing stray');
    await onConsole(name, 'for d in /sys/block/sd*; do echo "hp-disk=${d##*/} serial=$(tr -dc A-Za-z0-9 < $d/device/vpd_pg80)"; done', /hp-disk=sd[a-z]+ serial=\S*HP2/);

    // A Block claim: the attachment pod maps it (a volumeDevice), the handler makes a device node
    // with the loop device's numbers in the launcher pod's hotplug-disks (the launcher's, 0660;
    // the launcher shares the handler's device cgroup here, so no rule is written), the launcher
    // attaches it as a block disk; the guest writes a marker; removed, the node goes.
    const launcherPodUid = Object.keys(running.status?.activePods ?? {})[0] ?? '';
    const blockNode = `${await realpath(suite.stack.podsDir)}/${launcherPodUid}/volumes/kubernetes.io~empty-dir/hotplug-disks/hp-blk`;
    assert.equal((await ctl('addvolume', 'vmi', name, '-n', NS, '--volume-name=hp-blk', '--claim=hp-bclaim', '--serial=HPB')).code, 0);
    const blockReady = await suite.eventually('hp-blk Ready', async () => {
      const s = await volumeStatus(name, 'hp-blk');
      return s?.phase === 'Ready' ? s : undefined;
    }, BOOT_TIMEOUT_MS);
    assert.equal(blockReady.persistentVolumeClaimInfo?.volumeMode, 'Block');
    const [blockPod] = (await attachmentPods()).filter((p) => p.metadata?.name === blockReady.hotplugVolume?.attachPodName);
    assert.deepEqual(blockPod?.spec?.containers[0]?.volumeDevices?.map((d) => d.devicePath), ['/dev/hotplug/hp-blk']);
    const pvName = (await suite.core.readNamespacedPersistentVolumeClaim({ name: 'hp-bclaim', namespace: NS })).spec?.volumeName ?? '';
    const loop = (await suite.core.readPersistentVolume({ name: pvName })).spec?.local?.path ?? '';
    const numbers = (await run('stat', ['-c', '%t:%T', loop])).stdout.trim();
    const inPod = await run('nsenter', ['--target', String(pid), '--mount', 'stat', '-c', '%F %t:%T %a %u', '/var/run/kubevirt/hotplug-disks/hp-blk']);
    assert.equal(inPod.stdout.trim(), `block special file ${numbers} 660 ${(await lstat(blockNode)).uid}`);
    assert.equal((await lstat(blockNode)).uid, (await lstat(`${await realpath(suite.stack.podsDir)}/${launcherPodUid}/volumes/kubernetes.io~empty-dir/sockets/launcher-sock`)).uid, 'the launcher\'s');
    const blockDisk = /hp-disk=(sd[a-z]+) serial=\S*HPB/.exec(await onConsole(name,
      'for d in /sys/block/sd*; do echo "hp-disk=${d##*/} serial=$(tr -dc A-Za-z0-9 < $d/device/vpd_pg80)"; done', /hp-disk=sd[a-z]+ serial=\S*HPB/))?.[1];
    assert.ok(blockDisk !== undefined, 'the hotplugged block disk in the guest');
    await onConsole(name, `echo ${MARKER}-block | dd of=/dev/${blockDisk} bs=512 conv=fsync 2>/dev/null && sync && echo marker=$((6 * 7))`, /marker=42/);
    assert.equal((await ctl('removevolume', 'vmi', name, '-n', NS, '--volume-name=hp-blk')).code, 0);
    await suite.eventually('hp-blk gone: status entry, attachment pod, device node', async () =>
      (await volumeStatus(name, 'hp-blk')) === undefined && (await attachmentPods()).length === 1 && (await lstat(blockNode).catch(() => undefined)) === undefined ? true : undefined, BOOT_TIMEOUT_MS);

    // The data is on the claims: a new VMI that boots with both (virtio disks) reads the markers.
    const reader = guestVmi(suite.guest, 'vm-hotplug-reader') as { spec: { domain: { devices: { disks: unknown[] } }; volumes: unknown[] } };
    reader.spec.domain.devices.disks.push({ name: 'hp-read', disk: { bus: 'virtio' } }, { name: 'hp-read-blk', disk: { bus: 'virtio' } });
    reader.spec.volumes.push({ name: 'hp-read', persistentVolumeClaim: { claimName: 'hp-claim' } }, { name: 'hp-read-blk', persistentVolumeClaim: { claimName: 'hp-bclaim' } });
    await suite.apply(reader as unknown as Record<string, unknown>);
    const second = await suite.waitForPhase('vm-hotplug-reader', 'Running');
    await suite.waitForGuestReady(second);
    assert.match(await onConsole('vm-hotplug-reader', 'echo read=$(dd if=/dev/vdb bs=512 count=1 2>/dev/null | head -n 1)', new RegExp(`read=${MARKER}`)), new RegExp(`read=${MARKER}`));
    assert.match(await onConsole('vm-hotplug-reader', 'echo read=$(dd if=/dev/vdc bs=512 count=1 2>/dev/null | head -n 1)', new RegExp(`read=${MARKER}-block`)), new RegExp(`read=${MARKER}-block`));

    // That ReadWriteOnce claim, now the reader's, hot-plugged again: the volume waits Pending,
    // its reason named in the status and a Warning Event, and gets no attachment pod; once the
    // reader is gone it attaches (the controller looks again while it waits).
    assert.equal((await ctl('addvolume', 'vmi', name, '-n', NS, '--volume-name=hp-data', '--claim=hp-claim')).code, 0);
    const held = await suite.eventually('hp-data waits for the claim in use', async () => {
      const s = await volumeStatus(name, 'hp-data');
      return s?.reason === 'PvcInUse' ? s : undefined;
    }, BOOT_TIMEOUT_MS);
    assert.equal(held.phase, 'Pending');
    assert.match(held.message ?? '', /hp-claim is ReadWriteOnce and in use by vm-hotplug-reader/);
    await suite.eventually('its Warning Event', async () => ((await suite.events(name)).some((e) => e.type === 'Warning' && e.reason === 'PvcInUse' && e.message?.includes('volume hp-data') === true) ? true : undefined));
    assert.deepEqual((await attachmentPods()).map((p) => p.metadata?.labels?.[HOTPLUG_VOLUME_LABEL]), ['hp-more'], 'no attachment pod for hp-data while the claim is held');
    await suite.custom.deleteNamespacedCustomObject({ ...VMI_API, name: 'vm-hotplug-reader' });
    await suite.eventually('hp-data Ready once the reader is gone', async () => ((await volumeStatus(name, 'hp-data'))?.phase === 'Ready' ? true : undefined), BOOT_TIMEOUT_MS);
    await suite.waitForPodsGone(second);

    // Another volume added and the VMI deleted while it attaches (its attachment pod made, the
    // disk not Ready yet or just), two others attached: no attachment pod and no mount is left behind.
    assert.equal((await ctl('addvolume', 'vmi', name, '-n', NS, '--volume-name=hp-late', '--claim=hp-claim3')).code, 0);
    await suite.eventually('an attachment pod for hp-late', async () => ((await attachmentPods()).length === 3 ? true : undefined), BOOT_TIMEOUT_MS);
    await suite.custom.deleteNamespacedCustomObject({ ...VMI_API, name });
    await suite.waitForGone(name);
    await suite.waitForPodsGone(running);
    assert.deepEqual(await attachmentPods(), []);
    assert.deepEqual(await hotplugMounts(), [], 'nothing left mounted');
  });

  test('a VMI that is not running gets no volume', async () => {
    const out = await ctl('addvolume', 'vmi', 'no-such-vmi', '-n', NS, '--volume-name=hp-data');
    assert.equal(out.code, 1);
    assert.match(out.stderr, /not found/);
    // One that cannot be scheduled (no node matches its selector) never runs: refused naming its
    // phase, its spec unchanged.
    const vmi = guestVmi(suite.guest, 'vm-hotplug-pending');
    await suite.apply({ ...vmi, spec: { ...(vmi['spec'] as object), nodeSelector: { 'podvirt.io/no-such-node': 'x' } } });
    const pending = await suite.eventually('vm-hotplug-pending waits to be scheduled', async () => {
      const v = await suite.vmi('vm-hotplug-pending');
      return v?.status?.phase === 'Pending' || v?.status?.phase === 'Scheduling' ? v : undefined;
    });
    const refused = await ctl('addvolume', 'vmi', 'vm-hotplug-pending', '-n', NS, '--volume-name=hp-data', '--claim=hp-claim');
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /is (Pending|Scheduling), not Running/);
    assert.deepEqual((await suite.vmi('vm-hotplug-pending'))?.spec, pending.spec);
    await suite.custom.deleteNamespacedCustomObject({ ...VMI_API, name: 'vm-hotplug-pending' });
    await suite.waitForGone('vm-hotplug-pending');
    await suite.waitForPodsGone(pending);
  });
});
