// A host filesystem that fills up under the guest's write, with a real qemu: the disk's
// error_policy='stop' makes qemu pause the VM on ENOSPC instead of failing the guest's I/O; the
// VMI shows `Paused` / `PausedIOError` with a Warning `IOerror` Event; while the filesystem stays
// full the handler's paced resumes keep the VMI's writes bounded; once the test frees space the
// VM resumes by itself and the guest's write completes. The handler's first wait between resumes
// is 2 s here (--io-error-retry-interval; KubeVirt's 10 s by default), so the rounds the test
// watches come five times sooner than on a default node.
// The filesystem is a small tmpfs the test mounts and unmounts, offered as a tiny static
// PersistentVolume (hostPath, a storage class no provisioner serves) that the VMI's claim binds;
// the launcher makes the claim's disk.img on it. A filler file fills the tmpfs after the sparse
// disk image is made, and the guest's disk benchmark (podvirt.diskbench) writes into it.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { promisify } from 'node:util';
import type { VirtualMachineInstance } from '@podvirt/api';
import { BOOT_TIMEOUT_MS, guestVmi, NS, VmiSuite } from './vmi-stack.js';

const run = promisify(execFile);
const MIB = 1024 * 1024;
const PV = 'full-tmpfs';
/** The handler's first wait between resumes (`--io-error-retry-interval`); it doubles per round. */
const RETRY_INTERVAL_S = 2;
const PVC = 'full';
const VMI_API = { group: 'kubevirt.io', version: 'v1', namespace: NS, plural: 'virtualmachineinstances' };

describe('a full disk under the guest\'s write', () => {
  let dir = '';
  let mounted = false;
  const suite = VmiSuite.setUp({
    before: async () => {
      dir = await mkdtemp(join(tmpdir(), 'podvirt-fulldisk-'));
      await run('mount', ['-t', 'tmpfs', '-o', 'size=24m,mode=0755', 'podvirt-fulldisk', dir]);
      mounted = true;
      return { handlerArgs: ['--io-error-retry-interval', `${RETRY_INTERVAL_S}s`] };
    },
    beforeClose: async (s) => {
      const pvGone = await s.core.readPersistentVolume({ name: PV }).then(() => false, () => true);
      const pvcGone = await s.core.readNamespacedPersistentVolumeClaim({ name: PVC, namespace: NS }).then(() => false, () => true);
      assert.ok(pvGone && pvcGone, 'the PV and the PVC are deleted');
    },
    after: async () => {
      if (mounted) await run('umount', [dir]);
      if (dir !== '') await rm(dir, { recursive: true, force: true });
      const mounts = await readFile('/proc/self/mountinfo', 'utf8');
      assert.ok(dir === '' || !mounts.includes(dir), 'the tmpfs is unmounted');
    },
  });

  test('pauses with PausedIOError, stays quiet while full, resumes by itself when space is freed', async () => {
    const name = 'vm-full';
    const filler = join(dir, 'filler');
    // A 16 MiB PV on the 24 MiB tmpfs; the launcher makes the claim's 16 MiB disk.img (sparse)
    // when the VM starts, so the filler comes only once the VMI runs (before, the free space
    // check would see it). It leaves 4 MiB for the guest's 16 MiB write, made once it booted.
    await suite.apply(
      { apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: PV },
        spec: { capacity: { storage: '16Mi' }, accessModes: ['ReadWriteOnce'], volumeMode: 'Filesystem', storageClassName: 'tiny-static',
          persistentVolumeReclaimPolicy: 'Retain', hostPath: { path: dir, type: 'Directory' } } },
      { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: PVC, namespace: NS },
        spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'tiny-static', resources: { requests: { storage: '16Mi' } } } },
    );
    const bound = await suite.eventually('the claim binds the tiny PV', async () => {
      const c = await suite.core.readNamespacedPersistentVolumeClaim({ name: PVC, namespace: NS });
      return c.status?.phase === 'Bound' ? c : undefined;
    }, 30_000);
    assert.equal(bound.spec?.volumeName, PV);
    const vmi = guestVmi(suite.guest, name, { extraKernelArgs: 'podvirt.diskbench=vdb:16:1' });
    const spec = vmi['spec'] as { domain: { devices: { disks: unknown[] } }; volumes: unknown[] };
    spec.domain.devices.disks.push({ name: 'full', disk: { bus: 'virtio' } });
    spec.volumes.push({ name: 'full', persistentVolumeClaim: { claimName: PVC } });
    await suite.apply(vmi);
    const running = await suite.waitForPhase(name, 'Running');
    const image = await stat(join(dir, 'disk.img'));
    assert.equal(image.size, 16 * MIB, 'the launcher made the claim\'s disk.img on the PV, at the claim\'s size');
    await writeFile(filler, Buffer.alloc(20 * MIB));

    const pids = await suite.qemuPids(name);
    assert.equal(pids.length, 1);
    const cmdline = (await readFile(`/proc/${String(pids[0])}/cmdline`, 'utf8')).split('\0').join(' ');
    assert.match(cmdline, /"werror":"stop"/, 'the disk stops the VM on a write error (error_policy=stop)');

    const paused = await suite.eventually(`${name} Paused/PausedIOError`, async () => {
      const c = (await suite.vmi(name))?.status?.conditions?.find((x) => x.type === 'Paused');
      return c?.reason === 'PausedIOError' ? c : undefined;
    }, BOOT_TIMEOUT_MS);
    assert.equal(paused.status, 'True');
    const ioError = await suite.eventually('IOerror Event', async () => (await suite.events(name)).find((e) => e.reason === 'IOerror'), 30_000);
    assert.equal(ioError.type, 'Warning');
    assert.match(ioError.message ?? '', /enospc/);

    // While the filesystem stays full: 4 intervals (8 s) cover the resume at once and the rounds
    // due 1 and 3 intervals after it (the wait doubles), not the next at 7. Each round is a resume
    // and a pause again: a few writes, not a storm.
    const windowMs = 4 * RETRY_INTERVAL_S * 1000;
    const versionsBefore = suite.versionsSeen(name);
    const eventsBefore = (await suite.events(name)).reduce((n, e) => n + (e.count ?? 1), 0);
    await new Promise((resolve) => setTimeout(resolve, windowMs));
    const writes = suite.versionsSeen(name) - versionsBefore;
    const events = (await suite.events(name)).reduce((n, e) => n + (e.count ?? 1), 0) - eventsBefore;
    console.log(`# while full for ${String(windowMs / 1000)} s: ${String(writes)} VMI versions, ${String(events)} Events`);
    assert.ok(writes <= 12, `VMI writes while the disk stays full: ${String(writes)}`);
    assert.ok(events <= 12, `Events while the disk stays full: ${String(events)}`);
    assert.equal((await suite.vmi(name))?.status?.conditions?.find((x) => x.type === 'Paused')?.reason, 'PausedIOError');

    // Space freed: the next paced resume lets the guest's write complete.
    await rm(filler);
    const log = suite.serialLog(running, Object.keys(running.status?.activePods ?? {})[0] ?? '');
    await suite.eventually('the guest\'s write completes', async () => {
      const text = await readFile(log, 'utf8').catch(() => '');
      return /PODVIRT-GUEST-DISKBENCH dev=vdb mib=16 rounds=1 write_ms=\d+/.exec(text) ?? undefined;
    }, 240_000);
    await suite.eventually(`${name} Running without Paused`, async () => {
      const v = await suite.vmi(name);
      return v?.status?.phase === 'Running' && v.status.conditions?.find((x) => x.type === 'Paused') === undefined ? true : undefined;
    }, 60_000);

    await suite.custom.deleteNamespacedCustomObject({ ...VMI_API, name });
    await suite.waitForGone(name);
    await suite.waitForPodsGone(running as VirtualMachineInstance);
    await suite.core.deleteNamespacedPersistentVolumeClaim({ name: PVC, namespace: NS });
    await suite.core.deletePersistentVolume({ name: PV });
    await suite.eventually('the PVC and PV are gone', async () => {
      const pvc = await suite.core.readNamespacedPersistentVolumeClaim({ name: PVC, namespace: NS }).then(() => true, () => false);
      const pv = await suite.core.readPersistentVolume({ name: PV }).then(() => true, () => false);
      return pvc || pv ? undefined : true;
    }, 30_000);
  });
});
