// PVC volumes in the controller: the VMI waits (Pending, Synchronized=False with KubeVirt's
// reason, an Event naming the claim) for a missing or unbound claim and for a ReadWriteOnce
// claim another VMI's launcher holds; once it can run, the pod mounts each volume at KubeVirt's
// path (filesystem claim, block claim, hostDisk directory, cloud-init Secrets) and the status
// records what the controller learned of each claim.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import type { VirtualMachineInstance } from '@podvirt/api';
import { checkClaims, type ClaimStore } from '../src/decide/claim-check.js';
import { decideVmi } from '../src/decide/decide-vmi.js';
import { renderLauncherPod } from '../src/render/render-launcher-pod.js';
import { launcherPod, vmiFixture } from './fixtures.js';

const now = new Date('2025-01-01T00:05:00Z');

function pvcVmi(name = 'testvmi', disk: Record<string, unknown> = {}): VirtualMachineInstance {
  const vmi = vmiFixture({ metadata: { name, uid: `${name}-uid` } });
  vmi.spec.domain.devices.disks = [{ name: 'containerdisk' }, { name: 'data', ...disk }];
  vmi.spec.volumes = [...(vmi.spec.volumes ?? []), { name: 'data', persistentVolumeClaim: { claimName: 'disk' } }];
  return vmi;
}

function claim(phase: string, extra: { volumeMode?: string; accessModes?: string[] } = {}): V1PersistentVolumeClaim {
  const accessModes = extra.accessModes ?? ['ReadWriteOnce'];
  return {
    metadata: { name: 'disk', namespace: 'default' },
    spec: { accessModes, volumeMode: extra.volumeMode ?? 'Filesystem', resources: { requests: { storage: '1Gi' } } },
    status: { phase, ...(phase === 'Bound' ? { accessModes, capacity: { storage: '2Gi' } } : {}) },
  };
}

function store(c: V1PersistentVolumeClaim | undefined, pods: V1Pod[] = []): ClaimStore {
  return { getClaim: () => c, podsUsingClaim: () => pods };
}

function decide(vmi: VirtualMachineInstance, claims: ClaimStore) {
  return decideVmi({ vmi, pods: [], now, claims: checkClaims(vmi, claims) });
}

describe('a VMI waits for its claims', () => {
  test('missing claim: no pod, Synchronized=False FailedPvcNotFound, a Normal event naming it, once', () => {
    const d = decide(pvcVmi(), store(undefined));
    assert.equal(d.createPod, false);
    assert.equal(d.status.phase, 'Pending');
    const cond = d.status.conditions?.find((c) => c.type === 'Synchronized');
    assert.deepEqual([cond?.status, cond?.reason, cond?.message], ['False', 'FailedPvcNotFound', 'PVC default/disk does not exist, waiting for it to appear']);
    assert.deepEqual(d.events, [{ type: 'Normal', reason: 'FailedPvcNotFound', message: 'PVC default/disk does not exist, waiting for it to appear' }]);
    const again = decideVmi({ vmi: { ...pvcVmi(), status: d.status }, pods: [], now, claims: checkClaims(pvcVmi(), store(undefined)) });
    assert.deepEqual(again.events, []);
    assert.equal(again.statusChanged, false, 'waiting writes nothing more');
  });
  test('unbound claim: PVCNotReady; bound: the pod is created and the condition goes', () => {
    const pending = decide(pvcVmi(), store(claim('Pending')));
    assert.equal(pending.createPod, false);
    assert.equal(pending.status.conditions?.find((c) => c.type === 'Synchronized')?.reason, 'PVCNotReady');
    assert.match(pending.events[0]?.message ?? '', /PVC default\/disk is in phase Pending, waiting for it to be bound/);
    const bound = decideVmi({ vmi: { ...pvcVmi(), status: pending.status }, pods: [], now, claims: checkClaims(pvcVmi(), store(claim('Bound'))) });
    assert.equal(bound.createPod, true);
    assert.equal(bound.status.conditions?.find((c) => c.type === 'Synchronized'), undefined);
    assert.deepEqual(bound.status.volumeStatus, [{ name: 'data', target: '', persistentVolumeClaimInfo: {
      claimName: 'disk', accessModes: ['ReadWriteOnce'], volumeMode: 'Filesystem', capacity: { storage: '2Gi' }, requests: { storage: '1Gi' }, filesystemOverhead: '0.055' } }]);
  });
  test('a ReadWriteOnce claim held by another VMI\'s live launcher: PvcInUse, rechecked later; shareable or RWX goes ahead', () => {
    const other = launcherPod({ name: 'virt-launcher-other-x', phase: 'Running' });
    other.metadata!.ownerReferences![0]!.name = 'other';
    const held = decide(pvcVmi(), store(claim('Bound'), [other]));
    assert.equal(held.createPod, false);
    assert.equal(held.status.conditions?.find((c) => c.type === 'Synchronized')?.reason, 'PvcInUse');
    assert.deepEqual(held.events.map((e) => `${e.type} ${e.reason}`), ['Warning PvcInUse']);
    assert.match(held.events[0]?.message ?? '', /in use by VMI default\/other/);
    assert.ok((held.requeueAfterMs ?? 0) > 0);
    assert.equal(decide(pvcVmi('testvmi', { shareable: true }), store(claim('Bound'), [other])).createPod, true);
    assert.equal(decide(pvcVmi(), store(claim('Bound', { accessModes: ['ReadWriteMany'] }), [other])).createPod, true);
    const finished = launcherPod({ name: 'virt-launcher-other-x', phase: 'Succeeded' });
    finished.metadata!.ownerReferences![0]!.name = 'other';
    assert.equal(decide(pvcVmi(), store(claim('Bound'), [finished])).createPod, true, 'a finished launcher holds nothing');
  });
});

describe('the launcher pod mounts the volumes at KubeVirt\'s paths', () => {
  const config = { image: 'podvirt/launcher:test', allowEmulation: true, random: () => 0 };
  test('filesystem claim mounted under vmi-disks; block claim as a volumeDevice at /dev/<volume>', () => {
    const vmi = pvcVmi();
    const fs = renderLauncherPod(vmi, config, checkClaims(vmi, store(claim('Bound'))).claims);
    assert.deepEqual(fs.spec?.volumes?.find((v) => v.name === 'data'), { name: 'data', persistentVolumeClaim: { claimName: 'disk' } });
    assert.deepEqual(fs.spec?.containers[0]?.volumeMounts?.find((m) => m.name === 'data'), { name: 'data', mountPath: '/var/run/kubevirt-private/vmi-disks/data' });
    const block = renderLauncherPod(vmi, config, checkClaims(vmi, store(claim('Bound', { volumeMode: 'Block' }))).claims);
    assert.deepEqual(block.spec?.containers[0]?.volumeDevices, [{ name: 'data', devicePath: '/dev/data' }]);
    assert.equal(block.spec?.containers[0]?.volumeMounts?.find((m) => m.name === 'data'), undefined);
  });
  test('hostDisk: the allowed directory at a mirrored path, and cloud-init Secrets with their keys', () => {
    const vmi = vmiFixture();
    vmi.spec.domain.devices.disks = [{ name: 'containerdisk' }, { name: 'host' }, { name: 'ci' }];
    vmi.spec.volumes = [...(vmi.spec.volumes ?? []),
      { name: 'host', hostDisk: { path: '/var/disks/vm/a.img', type: 'DiskOrCreate', capacity: '1Gi' } },
      { name: 'ci', cloudInitNoCloud: { secretRef: { name: 'ud' }, networkDataSecretRef: { name: 'nd' } } }];
    assert.throws(() => renderLauncherPod(vmi, config), { code: 'CONTROLLER_ERR_INVALID_VMI', message: /^spec\.volumes\[1\]\.hostDisk: Forbidden: HostDisk feature gate is not enabled/ });
    const pod = renderLauncherPod(vmi, { ...config, hostDisk: { enabled: true, allowedDirs: ['/var', '/var/disks'] } });
    const volumes = pod.spec?.volumes ?? [];
    // The deepest listed directory, never the file's own (user-chosen) directory, never created.
    assert.deepEqual(volumes.find((v) => v.name === 'host'), { name: 'host', hostPath: { path: '/var/disks', type: 'Directory' } });
    assert.deepEqual(volumes.find((v) => v.name === 'ci-udata'), { name: 'ci-udata', secret: { secretName: 'ud' } });
    assert.deepEqual(volumes.find((v) => v.name === 'ci-ndata'), { name: 'ci-ndata', secret: { secretName: 'nd' } });
    const mounts = pod.spec?.containers[0]?.volumeMounts ?? [];
    assert.deepEqual(mounts.filter((m) => m.name !== 'host' && !['private', 'public', 'sockets', 'libvirt-runtime', 'ephemeral-disks', 'container-disks', 'hotplug-disks'].includes(m.name)), [
      { name: 'ci-udata', mountPath: '/var/run/kubevirt-private/secret/ci/userdata', subPath: 'userdata', readOnly: true },
      { name: 'ci-udata', mountPath: '/var/run/kubevirt-private/secret/ci/userData', subPath: 'userData', readOnly: true },
      { name: 'ci-ndata', mountPath: '/var/run/kubevirt-private/secret/ci/networkdata', subPath: 'networkdata', readOnly: true },
      { name: 'ci-ndata', mountPath: '/var/run/kubevirt-private/secret/ci/networkData', subPath: 'networkData', readOnly: true },
    ]);
    assert.deepEqual(mounts.find((m) => m.name === 'host'), { name: 'host', mountPath: '/var/run/kubevirt-private/vmi-disks/host/var/disks' });
  });
});
