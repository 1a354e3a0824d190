// PVC volumes in the converter: filesystem claims as disk.img in the pod's mount, block claims
// as /dev/<volume>, the image size from the claim recorded in the VMI status, KubeVirt's cache
// and io defaults, shareable, and the refusals (lun, hotpluggable, a claim the pod lacks).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { DiskIoSupport } from '../src/convert/context.js';
import { convertVmi } from '../src/convert/convert-vmi.js';
import { findElement } from '../src/convert/xml.js';
import { VmiInvalidError } from '@podvirt/api';
import { baseVmi, context } from './vmi-fixture.js';

const claimStatus = (capacity: string, request?: string) => ({
  volumeStatus: [{ name: 'data', target: '', persistentVolumeClaimInfo: { claimName: 'c', volumeMode: 'Filesystem', capacity: { storage: capacity }, ...(request ? { requests: { storage: request } } : {}) } }],
});

function convert(disk: Record<string, unknown>, opts: { mode?: 'block' | 'filesystem'; io?: DiskIoSupport; status?: unknown; pvc?: Record<string, unknown> } = {}) {
  const vmi = { ...baseVmi({ volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'c', ...opts.pvc } }] }, { devices: { disks: [{ name: 'data', ...disk }] } }), status: opts.status ?? claimStatus('1Gi') };
  const ctx = context({ volumeModes: new Map(opts.mode === undefined ? [['data', 'filesystem']] : [['data', opts.mode]]), diskIo: new Map(opts.io ? [['data', opts.io]] : []) });
  return convertVmi(vmi as never, ctx);
}

function rejects(field: string, fn: () => unknown): void {
  assert.throws(fn, (e: unknown) => e instanceof VmiInvalidError && e.field === field);
}

describe('persistentVolumeClaim volumes', () => {
  test('filesystem claim: raw disk.img under vmi-disks/<volume>, sized by the smaller of request and capacity, whole MiB', () => {
    const out = convert({}, { status: claimStatus('2Gi', '1000M') });
    const disk = findElement(out.domain, 'devices/disk');
    assert.equal(disk?.attrs['type'], 'file');
    assert.equal(findElement(disk!, 'source')?.attrs['file'], '/var/run/kubevirt-private/vmi-disks/data/disk.img');
    assert.equal(findElement(disk!, 'driver')?.attrs['type'], 'raw');
    const mib = 1024n * 1024n;
    const size = (1_000_000_000n / mib) * mib;
    assert.deepEqual(out.prepare, [{ kind: 'diskImage', root: '/var/run/kubevirt-private/vmi-disks/data', path: '/var/run/kubevirt-private/vmi-disks/data/disk.img', what: 'claim c', sizeBytes: size, maxBytes: size }]);
  });
  test('block claim: <disk type="block"> on /dev/<volume>', () => {
    const out = convert({}, { mode: 'block' });
    const disk = findElement(out.domain, 'devices/disk');
    assert.equal(disk?.attrs['type'], 'block');
    assert.equal(findElement(disk!, 'source')?.attrs['dev'], '/dev/data');
    assert.deepEqual(out.prepare, [{ kind: 'blockDevice', root: '/dev', path: '/dev/data', what: 'claim c' }]);
  });
  test('readOnly claim: a readonly disk whose image is never created', () => {
    const out = convert({}, { pvc: { readOnly: true } });
    assert.ok(findElement(out.domain, 'devices/disk/readonly'));
    assert.equal((out.prepare[0] as { sizeBytes?: bigint }).sizeBytes, undefined);
  });
  test('cache and io defaults: none+native on a block device with O_DIRECT, none on a sparse file, writethrough without O_DIRECT', () => {
    const driver = (out: ReturnType<typeof convert>) => findElement(out.domain, 'devices/disk/driver')?.attrs;
    assert.deepEqual([driver(convert({}, { mode: 'block', io: { directIo: true, preallocated: false } }))?.['cache'], driver(convert({}, { mode: 'block', io: { directIo: true, preallocated: false } }))?.['io']], ['none', 'native']);
    const sparse = driver(convert({}, { io: { directIo: true, preallocated: false } }));
    assert.deepEqual([sparse?.['cache'], sparse?.['io']], ['none', undefined]);
    const full = driver(convert({}, { io: { directIo: true, preallocated: true } }));
    assert.deepEqual([full?.['cache'], full?.['io']], ['none', 'native']);
    const noDirect = driver(convert({}, { io: { directIo: false, preallocated: true } }));
    assert.deepEqual([noDirect?.['cache'], noDirect?.['io']], ['writethrough', undefined]);
    const chosen = driver(convert({ cache: 'writeback', io: 'threads' }, { io: { directIo: true, preallocated: true } }));
    assert.deepEqual([chosen?.['cache'], chosen?.['io']], ['writeback', 'threads']);
    rejects('spec.domain.devices.disks[0].cache', () => convert({ cache: 'none' }, { io: { directIo: false, preallocated: false } }));
    rejects('spec.domain.devices.disks[0].io', () => convert({ cache: 'writeback', io: 'native' }, { io: { directIo: true, preallocated: true } }));
  });
  test('shareable: <shareable/> with cache none; another cache mode is refused', () => {
    const out = convert({ shareable: true });
    assert.ok(findElement(out.domain, 'devices/disk/shareable'));
    assert.equal(findElement(out.domain, 'devices/disk/driver')?.attrs['cache'], 'none');
  });
  test('refused by name: lun, hotpluggable, a claim the pod does not give, a claim under 1Mi', () => {
    rejects('spec.domain.devices.disks[0].lun', () => convert({ lun: {} }));
    rejects('spec.volumes[0].persistentVolumeClaim.hotpluggable', () => convert({}, { pvc: { hotpluggable: true } }));
    rejects('spec.domain.devices.disks[0].cache', () => convert({ shareable: true, cache: 'writeback' }));
    assert.throws(() => convertVmi({ ...baseVmi({ volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'c' } }] }, { devices: { disks: [{ name: 'data' }] } }) } as never, context()),
      (e: unknown) => e instanceof VmiInvalidError && e.field === 'spec.volumes[0].persistentVolumeClaim' && /neither a device at \/dev\/data nor a mount/.test(e.message));
    rejects('spec.volumes[0].persistentVolumeClaim', () => convert({}, { status: claimStatus('512Ki') }));
  });
});
