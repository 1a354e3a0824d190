// A VMI with a PersistentVolumeClaim on the testbed, through the controller, the handler and
// the launcher pod: it waits Pending (FailedPvcNotFound, an Event naming the claim) until the
// claim exists, starts by itself once it is bound, and its disk.img — created sparse at the
// claim's size in the provisioned directory — outlives the VMI; a second VMI on the same
// ReadWriteOnce claim waits (PvcInUse) while the first runs.
import assert from 'node:assert/strict';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { guestVmi, NS, VmiSuite } from './vmi-stack.js';

function withClaim(vmi: Record<string, unknown>, claimName: string): Record<string, unknown> {
  const spec = vmi['spec'] as { domain: { devices: { disks: unknown[] } }; volumes: unknown[] };
  spec.domain.devices.disks.push({ name: 'pvdisk', disk: { bus: 'virtio' } });
  spec.volumes.push({ name: 'pvdisk', persistentVolumeClaim: { claimName } });
  return vmi;
}

describe('VMIs on persistent volume claims', () => {
  const suite = VmiSuite.setUp();

  const syncCondition = async (name: string) => (await suite.vmi(name))?.status?.conditions?.find((c) => c.type === 'Synchronized');

  test('waits for a missing claim, starts once it is bound; the disk image stays after the VMI; a second VMI on the RWO claim waits', async () => {
    await suite.apply(withClaim(guestVmi(suite.guest, 'vm-pvc'), 'vm-disk'));
    const waiting = await suite.eventually('FailedPvcNotFound', async () => {
      const c = await syncCondition('vm-pvc');
      return c?.reason === 'FailedPvcNotFound' ? c : undefined;
    });
    assert.equal(waiting.message, `PVC ${NS}/vm-disk does not exist, waiting for it to appear`);
    assert.equal((await suite.vmi('vm-pvc'))?.status?.phase, 'Pending');
    const events = await suite.eventually('event', async () => (await suite.events('vm-pvc')).find((e) => e.reason === 'FailedPvcNotFound'));
    assert.match(events.message ?? '', /vm-disk/);

    await suite.apply(
      { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name: 'local' }, provisioner: 'podvirt.io/testbed-local', reclaimPolicy: 'Delete' },
      { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'vm-disk', namespace: NS },
        spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'local', resources: { requests: { storage: '64Mi' } } } },
    );
    const running = await suite.waitForPhase('vm-pvc', 'Running');
    assert.equal(running.status?.volumeStatus?.find((v) => v.name === 'pvdisk')?.persistentVolumeClaimInfo?.claimName, 'vm-disk');
    await suite.waitForGuestReady(running);
    const claim = await suite.core.readNamespacedPersistentVolumeClaim({ namespace: NS, name: 'vm-disk' });
    const dir = (await suite.core.readPersistentVolume({ name: claim.spec?.volumeName ?? '' })).spec?.hostPath?.path ?? '';
    const image = await stat(join(dir, 'disk.img'));
    assert.equal(image.size, 64 * 1024 * 1024, 'disk.img at the claim size');
    const table = await suite.kubectl(['get', 'pv,pvc,vmi']);
    assert.match(table.stdout, /persistentvolumeclaim\/vm-disk\s+Bound/);
    assert.match(table.stdout, /vm-pvc\s+\S+\s+Running/);

    await suite.apply(withClaim(guestVmi(suite.guest, 'vm-second'), 'vm-disk'));
    const held = await suite.eventually('PvcInUse', async () => {
      const c = await syncCondition('vm-second');
      return c?.reason === 'PvcInUse' ? c : undefined;
    });
    assert.match(held.message ?? '', /in use by VMI default\/vm-pvc/);
    assert.deepEqual(await suite.podsOf((await suite.vmi('vm-second'))!), [], 'no launcher pod for the waiting VMI');

    await suite.custom.deleteNamespacedCustomObject({ group: 'kubevirt.io', version: 'v1', namespace: NS, plural: 'virtualmachineinstances', name: 'vm-pvc' });
    await suite.waitForGone('vm-pvc');
    assert.equal((await stat(join(dir, 'disk.img'))).size, 64 * 1024 * 1024, 'the disk outlives its VMI');
    const second = await suite.waitForPhase('vm-second', 'Running');
    await suite.waitForGuestReady(second);
    await suite.custom.deleteNamespacedCustomObject({ group: 'kubevirt.io', version: 'v1', namespace: NS, plural: 'virtualmachineinstances', name: 'vm-second' });
    await suite.waitForGone('vm-second');
  });
});
