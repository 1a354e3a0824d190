// Hotplugged disks of a running domain against the fake libvirt: a volume the handler mounted
// (MountedToPod) is attached live as the next free scsi target with its serial and alias; one
// not mounted yet waits; a disk whose volume left the spec is detached once the guest releases
// it, its descriptor closed; a guest that keeps it is LAUNCHER_ERR_HOTPLUG naming the disk.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { DefaultedVmi, VolumeStatus } from '@podvirt/api';
import { pino } from 'pino';
import type { PersistentDisk } from '../src/convert/context.js';
import { HotplugDisks } from '../src/domain/hotplug-disks.js';
import { LauncherError } from '../src/errors.js';
import { FakeDomainConnection } from './fake-domain-connection.js';
import { baseVmi } from './vmi-fixture.js';

const DOMAIN = 'default_vm1';
const BOOT_XML = `<domain><name>${DOMAIN}</name><devices>
<disk type="file" device="disk"><target dev="vda" bus="virtio"/><alias name="ua-not-in-spec"/></disk>
<disk type="file" device="disk"><target dev="sda" bus="scsi"/><alias name="ua-boot-scsi"/></disk>
</devices></domain>`;

function vmi(hotplugged: string[], phases: Record<string, string>): DefaultedVmi {
  const v = baseVmi(
    { volumes: [{ name: 'boot-scsi', emptyDisk: { capacity: '1Mi' } }, ...hotplugged.map((n) => ({ name: n, persistentVolumeClaim: { claimName: `${n}-claim`, hotpluggable: true } }))] },
    { devices: { disks: [{ name: 'boot-scsi', disk: { bus: 'scsi' } }, ...hotplugged.map((n) => ({ name: n, disk: { bus: 'scsi' }, serial: `S-${n}` }))] } },
  );
  const volumeStatus: VolumeStatus[] = Object.entries(phases).map(([name, phase]) => ({ name, target: '', phase: phase as 'MountedToPod' }));
  return { ...v, status: { ...v.status, volumeStatus } } as DefaultedVmi;
}

async function setUp(): Promise<{ conn: FakeDomainConnection; opened: string[]; released: string[]; hotplug: HotplugDisks }> {
  const conn = new FakeDomainConnection();
  await conn.define(BOOT_XML);
  const opened: string[] = [];
  const released: string[] = [];
  const disks = {
    openHotplug: async (_vmi: DefaultedVmi, volume: string, dir: string): Promise<PersistentDisk> => {
      opened.push(`${dir}/${volume}.img`);
      return { path: `/proc/42/fd/${10 + opened.length}`, block: false, io: { directIo: true, preallocated: false } };
    },
    releaseHotplug: async (volume: string): Promise<void> => {
      released.push(volume);
    },
  };
  const hotplug = new HotplugDisks({ conn, domain: DOMAIN, dir: '/var/run/kubevirt/hotplug-disks', disks, log: pino({ level: 'silent' }), detachTimeoutMs: 200 });
  return { conn, opened, released, hotplug };
}

describe('hotplugged disks of the running domain', () => {
  test('attaches what the handler mounted, as the next free scsi target with its serial; waits for the rest', async () => {
    const { conn, opened, hotplug } = await setUp();
    await hotplug.sync(vmi(['hp1', 'hp2'], { hp1: 'MountedToPod', hp2: 'AttachedToNode' }));
    assert.deepEqual(opened, ['/var/run/kubevirt/hotplug-disks/hp1.img']);
    const added = /<disk\b[\s\S]*?ua-hp1[\s\S]*?<\/disk>/.exec(conn.xml ?? '')?.[0] ?? '';
    assert.match(added, /<source file="\/proc\/42\/fd\/11"\/>/);
    assert.match(added, /<target dev="sdb" bus="scsi"\/>/);
    assert.match(added, /<serial>S-hp1<\/serial>/);
    // Again: attached already, nothing doubles.
    await hotplug.sync(vmi(['hp1', 'hp2'], { hp1: 'Ready', hp2: 'AttachedToNode' }));
    assert.equal(conn.calls.filter((c) => c === 'attachDevice').length, 1);
    await conn.close();
    conn.assertClean();
  });

  test('detaches a disk whose volume left the spec once the guest released it, and closes its descriptor', async () => {
    const { conn, released, hotplug } = await setUp();
    await hotplug.sync(vmi(['hp1'], { hp1: 'MountedToPod' }));
    await hotplug.sync(vmi([], { hp1: 'Detaching' }));
    assert.doesNotMatch(conn.xml ?? '', /ua-hp1/);
    assert.deepEqual(released, ['hp1']);
    assert.match(conn.xml ?? '', /ua-boot-scsi/, 'the boot disks stay');
    assert.match(conn.xml ?? '', /ua-not-in-spec/, 'only a scsi disk can be a hotplugged one');
    await conn.close();
    conn.assertClean();
  });

  test('due: the first sync looks at the live domain; after it, only a VMI with hotpluggable volumes or a domain with hotplugged disks', async () => {
    const { conn, hotplug } = await setUp();
    assert.equal(hotplug.due(vmi([], {})), true, 'never looked at');
    await hotplug.sync(vmi([], {}));
    assert.equal(hotplug.due(vmi([], {})), false, 'no hotplug volume and only boot disks (the scsi boot disk is not one)');
    assert.equal(hotplug.due(vmi(['hp1'], {})), true, 'a hotpluggable volume');
    await hotplug.sync(vmi(['hp1'], { hp1: 'MountedToPod' }));
    assert.equal(hotplug.due(vmi([], { hp1: 'Detaching' })), true, 'hp1 is attached and left the spec');
    await hotplug.sync(vmi([], { hp1: 'Detaching' }));
    assert.equal(hotplug.due(vmi([], {})), false, 'detached');
    await conn.close();
    conn.assertClean();
  });

  test('a guest that keeps the disk: LAUNCHER_ERR_HOTPLUG naming it; the descriptor stays open', async () => {
    const { conn, released, hotplug } = await setUp();
    await hotplug.sync(vmi(['hp1'], { hp1: 'MountedToPod' }));
    conn.guestHoldsDevices = true;
    await assert.rejects(hotplug.sync(vmi([], { hp1: 'Detaching' })), (err: unknown) =>
      err instanceof LauncherError && err.code === 'LAUNCHER_ERR_HOTPLUG' && /did not release disk hp1 \(sdb\)/.test(err.message));
    assert.deepEqual(released, []);
    await conn.close();
    conn.assertClean();
  });
});
