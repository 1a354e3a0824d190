// PVC volumes in the converter: the disk the inspect step opened in the pod's mount (a file for
// a filesystem claim, a device for a block claim) reaches libvirt as the opened descriptor's
// path, with KubeVirt's cache and io defaults, shareable, and the refusals (lun, a claim that
// was not opened); a hotpluggable claim waits for its attachment.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { DiskIoSupport } from '../src/convert/context.js';
import { convertVmi } from '../src/convert/convert-vmi.js';
import { findAll, findElement } from '../src/convert/xml.js';
import { VmiInvalidError } from '@podvirt/api';
import { baseVmi, context } from './vmi-fixture.js';

const SPARSE: DiskIoSupport = { directIo: true, preallocated: false };

function convert(disk: Record<string, unknown>, opts: { block?: boolean; io?: DiskIoSupport; pvc?: Record<string, unknown> } = {}) {
  const vmi = baseVmi({ volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'c', ...opts.pvc } }] }, { devices: { disks: [{ name: 'data', ...disk }] } });
  const ctx = context({ persistentDisks: new Map([['data', { path: '/proc/42/fd/9', block: opts.block === true, io: opts.io ?? SPARSE }]]) });
  return convertVmi(vmi, ctx);
}

function rejects(field: string, fn: () => unknown): void {
  assert.throws(fn, (e: unknown) => e instanceof VmiInvalidError && e.field === field);
}

describe('persistentVolumeClaim volumes', () => {
  test('filesystem claim: a raw file disk on the opened disk.img; nothing left to prepare', () => {
    const out = convert({});
    const disk = findElement(out.domain, 'devices/disk');
    assert.equal(disk?.attrs['type'], 'file');
    assert.equal(findElement(disk!, 'source')?.attrs['file'], '/proc/42/fd/9');
    assert.equal(findElement(disk!, 'driver')?.attrs['type'], 'raw');
    assert.deepEqual(out.prepare, []);
  });
  test('block claim: <disk type="block"> on the opened device', () => {
    const out = convert({}, { block: true });
    const disk = findElement(out.domain, 'devices/disk');
    assert.equal(disk?.attrs['type'], 'block');
    assert.equal(findElement(disk!, 'source')?.attrs['dev'], '/proc/42/fd/9');
  });
  test('readOnly claim: a readonly disk', () => {
    assert.ok(findElement(convert({}, { pvc: { readOnly: true } }).domain, 'devices/disk/readonly'));
  });
  test('cache and io defaults: none+native on a block device with O_DIRECT, none on a sparse file, writethrough without O_DIRECT', () => {
    const driver = (out: ReturnType<typeof convert>) => findElement(out.domain, 'devices/disk/driver')?.attrs;
    const block = driver(convert({}, { block: true, io: { directIo: true, preallocated: false } }));
    assert.deepEqual([block?.['cache'], block?.['io']], ['none', 'native']);
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
  test('a hotpluggable claim is not in the boot domain, which gets the virtio-scsi controller it needs', () => {
    const out = convert({}, { pvc: { hotpluggable: true } });
    assert.equal(findElement(out.domain, 'devices/disk'), undefined);
    assert.deepEqual(findAll(out.domain, 'devices/controller').map((c) => c.attrs['type']).filter((t) => t !== 'virtio-serial'), ['usb', 'scsi']);
  });
  test('refused by name: lun, a claim that was not opened', () => {
    rejects('spec.domain.devices.disks[0].lun', () => convert({ lun: {} }));
    rejects('spec.domain.devices.disks[0].cache', () => convert({ shareable: true, cache: 'writeback' }));
    assert.throws(() => convertVmi(baseVmi({ volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'c' } }] }, { devices: { disks: [{ name: 'data' }] } }), context()),
      (e: unknown) => e instanceof VmiInvalidError && e.field === 'spec.volumes[0].persistentVolumeClaim' && /claim c was not opened/.test(e.message));
  });
});
