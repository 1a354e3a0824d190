import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeVmi, type VirtualMachineInstance } from '@podvirt/api';
import { ALLOW_POD_BRIDGE_MIGRATION_ANNOTATION, liveMigratability } from '../src/reconcile/live-migratable.js';
import { computeStatus } from '../src/reconcile/compute-status.js';
import { LauncherState } from '../src/launcher/launcher-state.js';
import { defaultedOf, makeDomain, makeVmi, T0 } from './fixtures.js';

type Edit = (vmi: VirtualMachineInstance) => void;

interface Row {
  readonly edit: Edit;
  readonly status: 'True' | 'False';
  readonly reason?: string;
  readonly message?: RegExp;
  readonly method: 'BlockMigration' | 'LiveMigration';
}

const onlyVolume = (volume: NonNullable<VirtualMachineInstance['spec']['volumes']>): Edit => (vmi) => {
  vmi.spec.volumes = volume;
};
const podNetwork = (iface: object, annotations?: Record<string, string>): Edit => (vmi) => {
  vmi.spec.networks = [{ name: 'default', pod: {} }];
  vmi.spec.domain.devices.interfaces = [{ name: 'default', ...iface }];
  if (annotations !== undefined) vmi.metadata.annotations = annotations;
};

// The rows start from a VMI without the default pod interface, so that each judges one thing.
const noPodInterface: Edit = (vmi) => {
  vmi.spec.domain.devices.autoattachPodInterface = false;
};

const rows: Array<[string, Row]> = [
  ['a container disk moves with the memory', { edit: () => undefined, status: 'True', method: 'BlockMigration' }],
  ['a VMI that names no interface gets the default pod bridge, which does not migrate', {
    edit: (vmi) => {
      delete vmi.spec.domain.devices.autoattachPodInterface;
    },
    status: 'False', reason: 'InterfaceNotLiveMigratable', message: /bridge.*only masquerade/, method: 'BlockMigration',
  }],
  ['masquerade on the pod network migrates', { edit: podNetwork({ masquerade: {} }), status: 'True', method: 'BlockMigration' }],
  ['a bridge on the pod network does not', {
    edit: podNetwork({ bridge: {} }), status: 'False', reason: 'InterfaceNotLiveMigratable', message: /bridge.*only masquerade/, method: 'BlockMigration',
  }],
  ['a bridge with KubeVirt\'s opt-in annotation does', {
    edit: podNetwork({ bridge: {} }, { 'kubevirt.io/allow-pod-bridge-network-live-migration': '' }), status: 'True', method: 'BlockMigration',
  }],
  ['a shared PVC alone is a live migration without copying disks', {
    edit: (vmi) => {
      onlyVolume([{ name: 'root', persistentVolumeClaim: { claimName: 'data' } }])(vmi);
      vmi.status = { ...vmi.status, volumeStatus: [{ name: 'root', target: 'vda', persistentVolumeClaimInfo: { accessModes: ['ReadWriteMany'] } }] };
    },
    status: 'True', method: 'LiveMigration',
  }],
  ['a hot-plugged volume is refused by name, before anything else', {
    edit: (vmi) => {
      podNetwork({ bridge: {} })(vmi);
      vmi.spec.volumes = [...(vmi.spec.volumes ?? []), { name: 'hp', persistentVolumeClaim: { claimName: 'c', hotpluggable: true } }];
      vmi.spec.domain.devices.disks = [...(vmi.spec.domain.devices.disks ?? []), { name: 'hp', disk: { bus: 'scsi' } }];
    },
    status: 'False', reason: 'HotplugNotLiveMigratable', message: /volume hp is hot-plugged/, method: 'BlockMigration',
  }],
  ['a ReadWriteOnce PVC is not shared', {
    edit: (vmi) => {
      onlyVolume([{ name: 'root', persistentVolumeClaim: { claimName: 'data' } }])(vmi);
      vmi.status = { ...vmi.status, volumeStatus: [{ name: 'root', target: 'vda', persistentVolumeClaimInfo: { accessModes: ['ReadWriteOnce'] } }] };
    },
    status: 'False', reason: 'DisksNotLiveMigratable', message: /PVC data is not shared/, method: 'BlockMigration',
  }],
  ['a PVC whose claim was not recorded yet', {
    edit: onlyVolume([{ name: 'root', persistentVolumeClaim: { claimName: 'data' } }]),
    status: 'False', reason: 'DisksNotLiveMigratable', message: /cannot tell whether PVC data/, method: 'BlockMigration',
  }],
  ['a hostDisk that is not shared', {
    edit: onlyVolume([{ name: 'root', hostDisk: { path: '/data/disk.img', type: 'Disk' } }]),
    status: 'False', reason: 'DisksNotLiveMigratable', message: /hostDisk root is not shared/, method: 'BlockMigration',
  }],
  ['a shared hostDisk', {
    edit: onlyVolume([{ name: 'root', hostDisk: { path: '/data/disk.img', type: 'Disk', shared: true } }]),
    status: 'True', method: 'LiveMigration',
  }],
  ['a read-only cdrom needs no copy', {
    edit: (vmi) => {
      onlyVolume([{ name: 'root', hostDisk: { path: '/data/disk.img', type: 'Disk', shared: true } }, { name: 'iso', containerDisk: { image: 'iso:1' } }])(vmi);
      vmi.spec.domain.devices.disks = [{ name: 'root', disk: {} }, { name: 'iso', cdrom: {} }];
    },
    status: 'True', method: 'LiveMigration',
  }],
  ['the interface reason comes before the disk reason, as in KubeVirt', {
    edit: (vmi) => {
      podNetwork({ bridge: {} })(vmi);
      onlyVolume([{ name: 'root', hostDisk: { path: '/data/disk.img', type: 'Disk' } }])(vmi);
    },
    status: 'False', reason: 'InterfaceNotLiveMigratable', method: 'BlockMigration',
  }],
];

for (const [name, row] of rows) {
  test(`liveMigratability: ${name}`, () => {
    const vmi = makeVmi({ phase: 'Running' });
    noPodInterface(vmi);
    row.edit(vmi);
    const got = liveMigratability(decodeVmi(vmi));
    assert.equal(got.condition.type, 'LiveMigratable');
    assert.equal(got.condition.status, row.status);
    assert.equal(got.condition.reason, row.reason);
    if (row.message !== undefined) assert.match(got.condition.message ?? '', row.message);
    else if (row.status === 'True') assert.equal(got.condition.message, undefined);
    assert.equal(got.method, row.method);
  });
}

test('computeStatus writes LiveMigratable only while the domain runs, and moves it when the VMI changes', () => {
  const vmi = makeVmi();
  const before = computeStatus({ vmi, defaulted: defaultedOf(vmi), domain: undefined, launcher: LauncherState.Ready, nowMs: T0 });
  assert.equal(before.conditions?.find((c) => c.type === 'LiveMigratable'), undefined);
  assert.equal(before.migrationMethod, undefined);
  podNetwork({ bridge: {} })(vmi);
  const running = computeStatus({ vmi, defaulted: defaultedOf(vmi), domain: makeDomain('Running', 'Booted'), launcher: LauncherState.Ready, nowMs: T0 });
  const cond = running.conditions?.find((c) => c.type === 'LiveMigratable');
  assert.equal(cond?.status, 'False');
  assert.equal(cond?.reason, 'InterfaceNotLiveMigratable');
});

test('computeStatus judges the VMI as stored with its defaults: no interface named means the default pod bridge', () => {
  const vmi = makeVmi();
  const running = computeStatus({ vmi, defaulted: defaultedOf(vmi), domain: makeDomain('Running', 'Booted'), launcher: LauncherState.Ready, nowMs: T0 });
  const cond = running.conditions?.find((c) => c.type === 'LiveMigratable');
  assert.equal(cond?.status, 'False');
  assert.equal(cond?.reason, 'InterfaceNotLiveMigratable');
  assert.equal(vmi.spec.domain.devices.interfaces, undefined, 'the stored VMI is not changed');
});

test('computeStatus keeps LiveMigratable as it was for a VMI that no longer decodes', () => {
  const vmi = makeVmi();
  vmi.spec.domain.devices.autoattachPodInterface = false;
  const first = computeStatus({ vmi, defaulted: defaultedOf(vmi), domain: makeDomain('Running', 'Booted'), launcher: LauncherState.Ready, nowMs: T0 });
  assert.equal(first.conditions?.find((c) => c.type === 'LiveMigratable')?.status, 'True');
  vmi.status = first;
  vmi.spec.domain.devices.disks = [{ name: 'nowhere', disk: {} }];
  const later = computeStatus({ vmi, defaulted: defaultedOf(vmi), domain: makeDomain('Running', 'Booted'), launcher: LauncherState.Ready, nowMs: T0 + 1000 });
  assert.deepEqual(later.conditions?.find((c) => c.type === 'LiveMigratable'), first.conditions?.find((c) => c.type === 'LiveMigratable'));
  assert.equal(later.migrationMethod, first.migrationMethod);
});

test('the judgement follows the stored spec and metadata, not the resourceVersion every status write moves', () => {
  const vmi = makeVmi();
  podNetwork({ bridge: {} })(vmi);
  const judge = (): string | undefined => {
    const s = computeStatus({ vmi, defaulted: defaultedOf(vmi), domain: makeDomain('Running', 'Booted'), launcher: LauncherState.Ready, nowMs: T0 });
    const c = s.conditions?.find((x) => x.type === 'LiveMigratable');
    return `${c?.status}/${c?.reason ?? ''}`;
  };
  assert.equal(judge(), 'False/InterfaceNotLiveMigratable');
  vmi.metadata.resourceVersion = '999';
  assert.equal(judge(), 'False/InterfaceNotLiveMigratable');
  vmi.metadata.annotations = { ...vmi.metadata.annotations, [ALLOW_POD_BRIDGE_MIGRATION_ANNOTATION]: '' };
  assert.equal(judge(), 'True/');
  delete vmi.metadata.annotations[ALLOW_POD_BRIDGE_MIGRATION_ANNOTATION];
  vmi.status = { conditions: [{ type: 'Nonsense' as never, status: 'Maybe' as never }] };
  assert.equal(judge(), 'False/InterfaceNotLiveMigratable', 'a status of the wrong shape does not change what the spec says');
});
