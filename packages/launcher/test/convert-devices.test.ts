// Table tests of the device families: disks and their volumes (with the prepare steps they
// ask for), serial console, agent channel, rng, watchdog, memballoon, graphics, and the
// refusal of fields podvirt does not implement. Every case takes the Sync call's path:
// request bytes → the Cmd server's decode → convertVmi.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { convertVmi } from '../src/convert/convert-vmi.js';
import { findAll, findElement, textOf, type XmlElement } from '../src/convert/xml.js';
import { VmiInvalidError } from '@podvirt/api';
import { context, invalidAt, rawVmi, syncDecode } from './vmi-fixture.js';

function withDisks(disks: unknown[], volumes: unknown[], devices: Record<string, unknown> = {}) {
  return convertVmi(syncDecode(rawVmi({ volumes }, { devices: { disks, ...devices } })), context());
}

function rejects(field: string, disks: unknown[], volumes: unknown[], devices: Record<string, unknown> = {}): void {
  assert.throws(() => withDisks(disks, volumes, devices), invalidAt(field));
}

const devs = (d: XmlElement) => findAll(d, 'disk/target').map((t) => `${t.attrs['dev']}/${t.attrs['bus']}`);

describe('disks and volumes', () => {
  test('containerDisk: qcow2 overlay in the ephemeral dir backed by the image', () => {
    const out = withDisks([{ name: 'cdisk', disk: { bus: 'virtio' }, bootOrder: 1 }], [{ name: 'cdisk', containerDisk: { image: 'guest:1' } }]);
    const disk = findElement(out.domain, 'devices/disk');
    assert.equal(findElement(disk!, 'driver')?.attrs['type'], 'qcow2');
    assert.equal(findElement(disk!, 'disk/source')?.attrs['file'], '/var/run/kubevirt-ephemeral-disks/disk-data/cdisk/disk.qcow2');
    assert.equal(findElement(disk!, 'backingStore/source')?.attrs['file'], '/var/run/kubevirt/container-disks/cdisk/disk.img');
    assert.equal(findElement(disk!, 'backingStore/format')?.attrs['type'], 'raw');
    assert.equal(findElement(disk!, 'boot')?.attrs['order'], 1);
    assert.equal(disk?.attrs['model'], 'virtio-non-transitional');
    assert.deepEqual(out.prepare, [
      { kind: 'overlay', path: '/var/run/kubevirt-ephemeral-disks/disk-data/cdisk/disk.qcow2', backingFile: '/var/run/kubevirt/container-disks/cdisk/disk.img', backingFormat: 'raw' },
    ]);
  });
  test('emptyDisk: a sparse raw file of the capacity', () => {
    const out = withDisks([{ name: 'scratch' }], [{ name: 'scratch', emptyDisk: { capacity: '2Gi' } }]);
    assert.equal(findElement(out.domain, 'disk/source')?.attrs['file'], '/var/run/libvirt/empty-disks/scratch.img');
    assert.deepEqual(out.prepare, [{ kind: 'emptyDisk', path: '/var/run/libvirt/empty-disks/scratch.img', sizeBytes: 2147483648n, field: 'spec.volumes[0].emptyDisk.capacity' }]);
  });
  test('cloudInitNoCloud: ISO per VMI, data from plain, base64 or secret', () => {
    const out = withDisks(
      [{ name: 'ci', disk: {} }],
      [{ name: 'ci', cloudInitNoCloud: { userDataBase64: 'I2Nsb3VkLWNvbmZpZw==', networkDataSecretRef: { name: 'net' } } }],
    );
    assert.equal(findElement(out.domain, 'disk/source')?.attrs['file'], '/var/run/libvirt/cloud-init-dir/mynamespace/testvmi/noCloud.iso');
    assert.deepEqual(out.prepare[0], {
      kind: 'cloudInitNoCloud', path: '/var/run/libvirt/cloud-init-dir/mynamespace/testvmi/noCloud.iso', volume: 'ci',
      userData: { base64: 'I2Nsb3VkLWNvbmZpZw==' }, networkData: { secret: 'net', keys: ['networkdata', 'networkData'] },
      instanceId: 'testvmi.mynamespace', hostname: 'testvmi',
    });
  });
  test('hostDisk: libvirt gets the confined open file; a path with .. or a bad type is refused', () => {
    const out = withDisks([{ name: 'h' }], [{ name: 'h', hostDisk: { path: '/var/lib/podvirt/host-disks/a/disk.img', type: 'DiskOrCreate', capacity: '1Mi' } }]);
    assert.deepEqual(out.prepare, []);
    assert.equal(findElement(out.domain, 'devices/disk/source')?.attrs['file'], '/proc/42/fd/7');
    rejects('spec.volumes[0].hostDisk.capacity', [{ name: 'h' }], [{ name: 'h', hostDisk: { path: '/var/lib/podvirt/host-disks/a/disk.img', type: 'DiskOrCreate', capacity: 'lots' } }]);
    rejects('spec.volumes[0].hostDisk.path', [{ name: 'h' }], [{ name: 'h', hostDisk: { path: '/var/lib/podvirt/host-disks/../../../etc/shadow', type: 'Disk' } }]);
    rejects('spec.volumes[0].hostDisk.type', [{ name: 'h' }], [{ name: 'h', hostDisk: { path: '/var/lib/podvirt/host-disks/x', type: 'Dir' } }]);
  });
  test('dev names in order per bus; readonly, serial, cdrom', () => {
    const out = withDisks(
      [{ name: 'a' }, { name: 'b', disk: { bus: 'sata', readonly: true }, serial: 'S1' }, { name: 'c', cdrom: {} }, { name: 'd', disk: { bus: 'scsi' } }],
      ['a', 'b', 'c', 'd'].map((name) => ({ name, emptyDisk: { capacity: '1Mi' } })),
    );
    assert.deepEqual(devs(out.domain), ['vda/virtio', 'sda/sata', 'sdb/sata', 'sdc/scsi']);
    const [, b, c] = findAll(out.domain, 'devices/disk');
    assert.ok(findElement(b!, 'readonly'));
    assert.equal(textOf(findElement(b!, 'serial')), 'S1');
    assert.equal(c?.attrs['device'], 'cdrom');
    assert.ok(findElement(c!, 'readonly'), 'a cdrom is readonly by default');
    assert.ok(findAll(out.domain, 'devices/controller').some((x) => x.attrs['type'] === 'scsi'));
  });
  test('a volume without a disk gets a virtio disk of its name, as KubeVirt defaults it', () => {
    const out = withDisks([{ name: 'x', disk: { bus: 'sata' } }], [{ name: 'x', emptyDisk: { capacity: '1Mi' } }, { name: 'y', emptyDisk: { capacity: '1Mi' } }]);
    assert.deepEqual(devs(out.domain), ['sda/sata', 'vda/virtio']);
  });
  test('cdrom tray, shared host disk, user data from secretRef', () => {
    const out = withDisks(
      [{ name: 'c', cdrom: { tray: 'open' } }, { name: 'h' }, { name: 'ci' }],
      [{ name: 'c', emptyDisk: { capacity: '1Mi' } }, { name: 'h', hostDisk: { path: '/var/lib/podvirt/host-disks/s.img', type: 'Disk', shared: true } },
        { name: 'ci', cloudInitNoCloud: { secretRef: { name: 'ud' } } }],
    );
    const [c, h] = findAll(out.domain, 'devices/disk');
    assert.equal(findElement(c!, 'target')?.attrs['tray'], 'open');
    assert.ok(findElement(h!, 'shareable'));
    assert.deepEqual((out.prepare[1] as { userData?: unknown }).userData, { secret: 'ud', keys: ['userdata', 'userData'] });
    rejects('spec.volumes[0].cloudInitNoCloud.secretRef.name', [{ name: 'ci' }], [{ name: 'ci', cloudInitNoCloud: { secretRef: {} } }]);
  });
  const bad: [string, string, unknown[], unknown[]][] = [
    ['disk without volume', 'spec.domain.devices.disks[0].name', [{ name: 'x' }], []],
    ['duplicate disk', 'spec.domain.devices.disks[1].name', [{ name: 'x' }, { name: 'x' }], [{ name: 'x', emptyDisk: { capacity: '1Mi' } }]],
    ['unknown bus', 'spec.domain.devices.disks[0].disk.bus', [{ name: 'x', disk: { bus: 'ide' } }], [{ name: 'x', emptyDisk: { capacity: '1Mi' } }]],
    ['virtio cdrom', 'spec.domain.devices.disks[0].cdrom.bus', [{ name: 'x', cdrom: { bus: 'virtio' } }], [{ name: 'x', emptyDisk: { capacity: '1Mi' } }]],
    ['two sources', 'spec.volumes[0]', [{ name: 'x' }], [{ name: 'x', emptyDisk: { capacity: '1Mi' }, containerDisk: { image: 'i' } }]],
    ['bad capacity', 'spec.volumes[0].emptyDisk.capacity', [{ name: 'x' }], [{ name: 'x', emptyDisk: { capacity: 'big' } }]],
    ['image not found', 'spec.volumes[0].containerDisk.image', [{ name: 'x' }], [{ name: 'x', containerDisk: { image: 'i' } }]],
    ['empty cloud-init', 'spec.volumes[0].cloudInitNoCloud', [{ name: 'x' }], [{ name: 'x', cloudInitNoCloud: {} }]],
    ['two cloud-init forms', 'spec.volumes[0].cloudInitNoCloud', [{ name: 'x' }], [{ name: 'x', cloudInitNoCloud: { userData: 'a', userDataBase64: 'YQ==' } }]],
    ['bad cache', 'spec.domain.devices.disks[0].cache', [{ name: 'x', cache: 'unsafe' }], [{ name: 'x', emptyDisk: { capacity: '1Mi' } }]],
    ['bad boot order', 'spec.domain.devices.disks[0].bootOrder', [{ name: 'x', bootOrder: 0 }], [{ name: 'x', emptyDisk: { capacity: '1Mi' } }]],
  ];
  for (const [name, field, disks, volumes] of bad) test(`refused: ${name}`, () => rejects(field, disks, volumes));
});

describe('fixed and autoattached devices', () => {
  test('serial console on a unix socket with a log, under the private dir per uid', () => {
    const d = withDisks([], []).domain;
    assert.equal(findElement(d, 'serial/source')?.attrs['path'], '/var/run/kubevirt-private/test-uid/virt-serial0');
    assert.deepEqual(findElement(d, 'serial/log')?.attrs, { file: '/var/run/kubevirt-private/test-uid/virt-serial0-log', append: 'on' });
    assert.equal(findElement(d, 'console/target')?.attrs['type'], 'serial');
    const off = withDisks([], [], { autoattachSerialConsole: false }).domain;
    assert.equal(findElement(off, 'serial'), undefined);
    assert.equal(findElement(off, 'console'), undefined);
  });
  test('guest agent channel always present', () => {
    assert.equal(findElement(withDisks([], []).domain, 'channel/target')?.attrs['name'], 'org.qemu.guest_agent.0');
  });
  test('rng only when asked, from /dev/urandom', () => {
    assert.equal(findElement(withDisks([], []).domain, 'rng'), undefined);
    assert.equal(textOf(findElement(withDisks([], [], { rng: {} }).domain, 'rng/backend')), '/dev/urandom');
  });
  test('watchdog: a name alone defaults to i6300esb with action reset; bad action refused', () => {
    assert.deepEqual(findElement(withDisks([], [], { watchdog: { name: 'w' } }).domain, 'devices/watchdog')?.attrs, { model: 'i6300esb', action: 'reset' });
    assert.deepEqual(findElement(withDisks([], [], { watchdog: { name: 'w', i6300esb: {} } }).domain, 'devices/watchdog')?.attrs, { model: 'i6300esb', action: 'reset' });
    assert.equal(findElement(withDisks([], [], { watchdog: { name: 'w', i6300esb: { action: 'poweroff' } } }).domain, 'devices/watchdog')?.attrs['action'], 'poweroff');
    rejects('spec.domain.devices.watchdog.i6300esb.action', [], [], { watchdog: { name: 'w', i6300esb: { action: 'explode' } } });
  });
  test('memballoon virtio by default, none when autoattach is off', () => {
    assert.equal(findElement(withDisks([], []).domain, 'memballoon')?.attrs['model'], 'virtio-non-transitional');
    assert.equal(findElement(withDisks([], [], { autoattachMemBalloon: false }).domain, 'memballoon')?.attrs['model'], 'none');
  });
  test('graphics: one VNC socket and one VGA unless disabled', () => {
    const on = withDisks([], []).domain;
    assert.equal(findAll(on, 'devices/graphics').length, 1);
    assert.equal(findElement(on, 'video/model')?.attrs['type'], 'vga');
    const off = withDisks([], [], { autoattachGraphicsDevice: false }).domain;
    assert.equal(findAll(off, 'devices/graphics').length + findAll(off, 'devices/video').length, 0);
  });
});

describe('unsupported fields are named, never dropped', () => {
  const cases: [string, Record<string, unknown>, string][] = [
    ['gpus', { domain: { devices: { gpus: [{ name: 'g', deviceName: 'nvidia' }] } } }, 'spec.domain.devices.gpus[0]'],
    ['a slirp interface', { domain: { devices: { interfaces: [{ name: 'default', slirp: {} }] } } }, 'spec.domain.devices.interfaces[0].slirp'],
    ['hyperv feature', { domain: { features: { hyperv: { relaxed: {} } } } }, 'spec.domain.features.hyperv'],
    ['lun disk', { domain: { devices: { disks: [{ name: 'd', lun: {} }] } } }, 'spec.domain.devices.disks[0].lun'],
    ['a multus network', { networks: [{ name: 'default', multus: { networkName: 'n' } }] }, 'spec.networks[0].multus'],
  ];
  for (const [name, spec, field] of cases) {
    test(name, () => {
      const vmi = rawVmi();
      const merged = { ...vmi, spec: { ...vmi.spec, ...spec, domain: { ...vmi.spec.domain, ...(spec['domain'] as object | undefined) } } };
      assert.throws(() => convertVmi(syncDecode(merged), context()), invalidAt(field));
    });
  }
  test('architecture other than amd64 is refused', () => {
    assert.throws(() => syncDecode(rawVmi({ architecture: 'arm64' })), invalidAt('spec.architecture'));
  });
  test('the unsupported field is named first', () => {
    assert.throws(
      () => syncDecode(rawVmi({}, { devices: { gpus: [{ name: 'g' }] }, cpu: { cores: 0 } })),
      (e: unknown) => e instanceof VmiInvalidError && e.field === 'spec.domain.devices.gpus[0]' && /does not support/.test(e.message) && e.fieldErrors.length === 2,
    );
  });
});
