// planHotplug: the attachment pods of a running VMI's hotplugged claims and the controller's
// share of their status.volumeStatus entries and Events, as a table; and the pod it renders.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import type { VirtualMachineInstance, VolumeStatus } from '@podvirt/api';
import type { ClaimStore } from '../src/decide/claim-check.js';
import { CLAIM_IN_USE_RECHECK_MS } from '../src/decide/decide-vmi.js';
import { planHotplug } from '../src/decide/hotplug-attachments.js';
import { renderAttachmentPod } from '../src/render/render-attachment-pod.js';

function vmi(opts: { hotplug?: string[]; phase?: string; volumeStatus?: VolumeStatus[]; deleting?: boolean } = {}): VirtualMachineInstance {
  const hotplug = opts.hotplug ?? ['data'];
  return {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachineInstance',
    metadata: { name: 'vm1', namespace: 'ns', uid: 'vmi-uid', ...(opts.deleting === true ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}) },
    spec: {
      domain: { devices: { disks: [{ name: 'root' }, ...hotplug.map((name) => ({ name, disk: { bus: 'scsi' as const } }))] } },
      volumes: [{ name: 'root', containerDisk: { image: 'guest' } }, ...hotplug.map((name) => ({ name, persistentVolumeClaim: { claimName: `${name}-claim`, hotpluggable: true } }))],
    },
    status: { phase: (opts.phase ?? 'Running') as 'Running', nodeName: 'node1', ...(opts.volumeStatus === undefined ? {} : { volumeStatus: opts.volumeStatus }) },
  };
}

function claim(name: string, phase = 'Bound', accessModes = ['ReadWriteOnce']): V1PersistentVolumeClaim {
  return { metadata: { name, namespace: 'ns' }, spec: { accessModes }, status: { phase, accessModes } };
}

function pod(name: string, volume: string, phase = 'Running', owner = 'vmi-uid'): V1Pod {
  return {
    metadata: { name, namespace: 'ns', uid: `${name}-uid`, labels: { 'kubevirt.io': 'hotplug-disk', 'podvirt.io/hotplug-volume': volume }, ownerReferences: [{ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', name: 'x', uid: owner, controller: true }] },
    spec: { containers: [], volumes: [{ name: volume, persistentVolumeClaim: { claimName: `${volume}-claim` } }] },
    status: { phase },
  };
}

function store(claims: V1PersistentVolumeClaim[], using: V1Pod[] = []): ClaimStore {
  return { getClaim: (_ns, name) => claims.find((c) => c.metadata?.name === name), podsUsingClaim: () => using };
}

const CLAIM_INFO = { claimName: 'data-claim', accessModes: ['ReadWriteOnce'], volumeMode: 'Filesystem', filesystemOverhead: '0.055' };

describe('planHotplug', () => {
  test('a missing or unbound claim stays Pending, naming why; no pod', () => {
    const missing = planHotplug(vmi(), [], store([]));
    assert.deepEqual([missing.create, missing.volumeStatus.map((s) => `${s.phase} ${s.reason}`)], [[], ['Pending FailedPvcNotFound']]);
    const unbound = planHotplug(vmi(), [], store([claim('data-claim', 'Pending')]));
    assert.deepEqual(unbound.volumeStatus.map((s) => `${s.phase} ${s.reason}`), ['Pending PVCNotReady']);
  });

  test('a volume that comes to wait for a missing claim gets one Normal Event naming it; not again while it waits', () => {
    const missing = planHotplug(vmi(), [], store([]));
    assert.deepEqual(missing.events, [{ type: 'Normal', reason: 'FailedPvcNotFound', message: 'volume data: PVC ns/data-claim does not exist' }]);
    assert.equal(missing.requeueAfterMs, undefined, 'the claim informer brings the claim');
    const again = planHotplug(vmi({ volumeStatus: missing.volumeStatus }), [], store([]));
    assert.deepEqual(again.events, []);
    assert.deepEqual(planHotplug(vmi(), [], store([claim('data-claim', 'Pending')])).events, [], 'an unbound claim is no news');
  });

  test('a bound claim gets its attachment pod (Bound), then AttachedToNode with the pod named once it runs', () => {
    const first = planHotplug(vmi(), [], store([claim('data-claim')]));
    assert.deepEqual(first.create, [{ volume: 'data', claimName: 'data-claim' }]);
    assert.equal(first.volumeStatus[0]?.phase, 'Bound');
    const pending = planHotplug(vmi(), [pod('hp-volume-a', 'data', 'Pending')], store([claim('data-claim')]));
    assert.deepEqual([pending.create, pending.volumeStatus[0]?.phase, pending.volumeStatus[0]?.hotplugVolume], [[], 'Bound', { attachPodName: 'hp-volume-a', attachPodUID: 'hp-volume-a-uid' }]);
    const running = planHotplug(vmi(), [pod('hp-volume-a', 'data')], store([claim('data-claim')]));
    assert.equal(running.volumeStatus[0]?.phase, 'AttachedToNode');
    // What the claim is, for the handler that sizes a new disk image from it.
    assert.deepEqual(running.volumeStatus[0]?.persistentVolumeClaimInfo, CLAIM_INFO);
  });

  test('never moves a volume back from the handler’s phases', () => {
    const ready: VolumeStatus = { name: 'data', target: 'sda', phase: 'Ready', reason: 'VolumeReady', message: 'attached' };
    const plan = planHotplug(vmi({ volumeStatus: [ready] }), [pod('hp-volume-a', 'data')], store([claim('data-claim')]));
    assert.deepEqual(plan.volumeStatus, [{ ...ready, hotplugVolume: { attachPodName: 'hp-volume-a', attachPodUID: 'hp-volume-a-uid' }, persistentVolumeClaimInfo: CLAIM_INFO }]);
  });

  test('a ReadWriteOnce claim another VMI’s pod uses is PvcInUse; a ReadWriteMany one is not', () => {
    const other = pod('virt-launcher-b', 'data', 'Running', 'other-uid');
    const inUse = planHotplug(vmi(), [], store([claim('data-claim')], [other]));
    assert.equal(inUse.volumeStatus[0]?.reason, 'PvcInUse');
    assert.deepEqual(inUse.create, []);
    assert.deepEqual(inUse.events, [{ type: 'Warning', reason: 'PvcInUse', message: 'volume data: PVC ns/data-claim is ReadWriteOnce and in use by x' }]);
    // Its release sends this VMI no event: rechecked until then.
    assert.equal(inUse.requeueAfterMs, CLAIM_IN_USE_RECHECK_MS);
    assert.deepEqual(planHotplug(vmi({ volumeStatus: inUse.volumeStatus }), [], store([claim('data-claim')], [other])).events, [], 'told once');
    assert.equal(planHotplug(vmi(), [], store([claim('data-claim', 'Bound', ['ReadWriteMany'])], [other])).create.length, 1);
  });

  test('removal: the pod goes at once unless the handler has the volume mounted (Detaching until it is not)', () => {
    const attached: VolumeStatus = { name: 'data', target: '', phase: 'AttachedToNode', hotplugVolume: { attachPodName: 'hp-volume-a' } };
    const gone = planHotplug(vmi({ hotplug: [], volumeStatus: [attached] }), [pod('hp-volume-a', 'data')], store([]));
    assert.deepEqual([gone.delete, gone.volumeStatus], [['hp-volume-a'], []]);
    const mounted: VolumeStatus = { ...attached, phase: 'MountedToPod' };
    const held = planHotplug(vmi({ hotplug: [], volumeStatus: [mounted] }), [pod('hp-volume-a', 'data')], store([]));
    assert.deepEqual([held.delete, held.volumeStatus.map((s) => s.phase)], [[], ['Detaching']]);
  });

  test('a failed pod is replaced; a deleted or finished VMI loses every pod; nothing is created before Running', () => {
    const failed = planHotplug(vmi(), [pod('hp-volume-a', 'data', 'Failed')], store([claim('data-claim')]));
    assert.deepEqual([failed.delete, failed.create.length], [['hp-volume-a'], 1]);
    assert.deepEqual(planHotplug(vmi({ deleting: true }), [pod('hp-volume-a', 'data')], store([claim('data-claim')])).delete, ['hp-volume-a']);
    assert.deepEqual(planHotplug(vmi({ phase: 'Succeeded' }), [pod('hp-volume-a', 'data')], store([claim('data-claim')])).delete, ['hp-volume-a']);
    assert.deepEqual(planHotplug(vmi({ phase: 'Scheduled' }), [], store([claim('data-claim')])).create, []);
  });

  test('the boot volumes’ entries stay as they are, in their places', () => {
    const boot: VolumeStatus = { name: 'root', target: 'vda' };
    const plan = planHotplug(vmi({ volumeStatus: [boot] }), [], store([claim('data-claim')]));
    assert.deepEqual(plan.volumeStatus.map((s) => s.name), ['root', 'data']);
    assert.deepEqual(plan.volumeStatus[0], boot);
  });
});

describe('renderAttachmentPod', () => {
  test('on the VMI’s node, owned by the VMI, mounting the claim (a device for a Block claim)', () => {
    const fs = renderAttachmentPod(vmi(), 'data', claim('data-claim'), 'podvirt/launcher:1');
    assert.equal(fs.metadata?.generateName, 'hp-volume-');
    assert.equal(fs.spec?.nodeName, 'node1');
    assert.deepEqual(fs.metadata?.ownerReferences?.map((r) => [r.kind, r.uid, r.controller]), [['VirtualMachineInstance', 'vmi-uid', true]]);
    assert.deepEqual(fs.spec?.containers[0]?.volumeMounts, [{ name: 'data', mountPath: '/hotplug/data' }]);
    assert.deepEqual(fs.spec?.volumes, [{ name: 'data', persistentVolumeClaim: { claimName: 'data-claim' } }]);
    const block = renderAttachmentPod(vmi(), 'data', { ...claim('data-claim'), spec: { volumeMode: 'Block' } }, 'podvirt/launcher:1');
    assert.deepEqual(block.spec?.containers[0]?.volumeDevices, [{ name: 'data', devicePath: '/dev/hotplug/data' }]);
  });
});
