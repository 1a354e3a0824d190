import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { findUnsupportedFields } from '../src/index.js';
import { ephemeralVmi, fullVmi, masqueradeVmi, setPath, type Json } from './fixtures.js';

type Row = [title: string, base: () => Json, changes: [string, unknown][], expected: string[]];

const D = 'spec.domain';
const DEV = 'spec.domain.devices';

const ROWS: Row[] = [
  ['a GPU', ephemeralVmi, [[`${DEV}.gpus`, [{ name: 'gpu1', deviceName: 'nvidia.com/GP102' }]]], [`${DEV}.gpus[0]`]],
  ['host devices', ephemeralVmi, [[`${DEV}.hostDevices`, [{ name: 'h', deviceName: 'x' }, { name: 'i', deviceName: 'y' }]]], [`${DEV}.hostDevices[0]`]],
  ['a multus network', masqueradeVmi, [['spec.networks.0.multus', { networkName: 'other' }]], ['spec.networks[0].multus']],
  ['slirp, passt and binding plugins', masqueradeVmi, [[`${DEV}.interfaces.0.slirp`, {}]], [`${DEV}.interfaces[0].slirp`]],
  ['dhcpOptions', masqueradeVmi, [[`${DEV}.interfaces.0.dhcpOptions`, { bootFileName: 'x' }]], [`${DEV}.interfaces[0].dhcpOptions`]],
  ['a lun', ephemeralVmi, [[`${DEV}.disks.0.disk`, undefined], [`${DEV}.disks.0.lun`, {}]], [`${DEV}.disks[0].lun`]],
  ['a disk pci address', ephemeralVmi, [[`${DEV}.disks.0.disk.pciAddress`, '0000:81:01.1']], [`${DEV}.disks[0].disk.pciAddress`]],
  ['a dedicated IO thread', ephemeralVmi, [[`${DEV}.disks.0.dedicatedIOThread`, true]], [`${DEV}.disks[0].dedicatedIOThread`]],
  ['a lun disk', ephemeralVmi, [[`${DEV}.disks.0`, { name: 'containerdisk', lun: { bus: 'scsi' } }]], [`${DEV}.disks[0].lun`]],
  ['a data volume', ephemeralVmi, [['spec.volumes.0', { name: 'containerdisk', dataVolume: { name: 'dv' } }]], ['spec.volumes[0].dataVolume']],
  ['a config drive', ephemeralVmi, [['spec.volumes.0', { name: 'containerdisk', cloudInitConfigDrive: { userData: 'x' } }]], ['spec.volumes[0].cloudInitConfigDrive']],
  ['a container disk pull secret', ephemeralVmi, [['spec.volumes.0.containerDisk.imagePullSecret', 's']], ['spec.volumes[0].containerDisk.imagePullSecret']],
  ['hugepages', ephemeralVmi, [[`${D}.memory`, { hugepages: { pageSize: '2Mi' } }]], [`${D}.memory.hugepages`]],
  ['dedicated CPUs', ephemeralVmi, [[`${D}.cpu`, { cores: 2, dedicatedCpuPlacement: true }]], [`${D}.cpu.dedicatedCpuPlacement`]],
  ['cpu features', ephemeralVmi, [[`${D}.cpu`, { features: [{ name: 'vmx' }] }]], [`${D}.cpu.features[0]`]],
  ['hyperv features', ephemeralVmi, [[`${D}.features`, { acpi: {}, hyperv: { relaxed: {} } }]], [`${D}.features.hyperv`]],
  ['an empty but meaningful object', ephemeralVmi, [[`${D}.features`, { kvm: {} }]], [`${D}.features.kvm`]],
  ['EFI firmware', ephemeralVmi, [[`${D}.firmware`, { bootloader: { efi: { secureBoot: false } } }]], [`${D}.firmware.bootloader`]],
  ['a GPU resource request', ephemeralVmi, [[`${D}.resources.limits`, { 'nvidia.com/gpu': '1' }]], [`${D}.resources.limits[nvidia.com/gpu]`]],
  ['overcommit of the guest overhead', ephemeralVmi, [[`${D}.resources.overcommitGuestOverhead`, true]], [`${D}.resources.overcommitGuestOverhead`]],
  ['a TPM and a sound card', ephemeralVmi, [[`${DEV}.tpm`, {}], [`${DEV}.sound`, { name: 's' }]], [`${DEV}.tpm`, `${DEV}.sound`]],
  ['scheduling fields', ephemeralVmi, [['spec.affinity', { nodeAffinity: {} }], ['spec.tolerations', [{ key: 'k' }]]], ['spec.affinity', 'spec.tolerations[0]']],
  ['a readiness probe', ephemeralVmi, [['spec.readinessProbe', { tcpSocket: { port: 22 } }]], ['spec.readinessProbe']],
  ['a startStrategy', ephemeralVmi, [['spec.startStrategy', 'Paused']], ['spec.startStrategy']],
  ['an unknown top-level key', ephemeralVmi, [['extra', { a: 1 }]], ['extra']],
  ['a key that is not an identifier', ephemeralVmi, [['spec.volumes.0.containerDisk.weird key', 'x']], ['spec.volumes[0].containerDisk[weird key]']],
  ['several, in document order', ephemeralVmi, [[`${DEV}.gpus`, [{ name: 'g' }]], ['spec.hostname', 'h'], [`${D}.chassis`, { asset: 'a' }]], [`${DEV}.gpus[0]`, `${D}.chassis`, 'spec.hostname']],
  // Zero values Go's encoder omits mean "not set".
  ['null, false, 0, "" and [] are not set', ephemeralVmi, [[`${DEV}.gpus`, null], [`${D}.cpu`, { dedicatedCpuPlacement: false, maxSockets: 0, model: '' }], [`${DEV}.hostDevices`, []], ['spec.hostname', '']], []],
  [
    'a VMI as KubeVirt serves it back',
    ephemeralVmi,
    [
      ['metadata.creationTimestamp', null],
      [`${D}.cpu`, { model: 'host-model', cores: 1, sockets: 1, threads: 1 }],
      [`${D}.features`, { acpi: { enabled: true } }],
      [`${D}.machine`, { type: 'q35' }],
      ['spec.architecture', 'amd64'],
      ['status', { phase: 'Pending', guestOSInfo: {}, qosClass: 'Burstable' }],
    ],
    [],
  ],
  ['metadata and status are free', ephemeralVmi, [['metadata.managedFields', [{ manager: 'kubectl' }]], ['status', { migrationState: { completed: true }, volumeStatus: [{ name: 'x' }] }]], []],
  ['labels and node selectors are maps', ephemeralVmi, [['metadata.labels', { 'a.b/c': 'd' }], ['spec.nodeSelector', { 'kubernetes.io/arch': 'amd64' }]], []],
  // A wrong JSON type under a supported key is validation's business, not this one's.
  ['wrong types are left to validation', ephemeralVmi, [[`${DEV}.disks`, 'x'], ['spec.volumes', [null, 5, 'x']]], []],
];

function unsupportedAfter(base: () => Json, changes: [string, unknown][]): string[] {
  const vmi = base();
  for (const [path, value] of changes) setPath(vmi, path, value);
  const errors = findUnsupportedFields(vmi);
  for (const error of errors) assert.equal(error.type, 'NotSupported');
  return errors.map((error) => error.field);
}

describe('findUnsupportedFields', () => {
  it('finds nothing in what podvirt supports', () => {
    assert.deepEqual(findUnsupportedFields(ephemeralVmi()), []);
    assert.deepEqual(findUnsupportedFields(fullVmi()), []);
  });

  for (const [title, base, changes, expected] of ROWS) {
    it(title, () => {
      assert.deepEqual(unsupportedAfter(base, changes), expected);
    });
  }

  it('accepts a pod network; other bindings stay refused by name', () => {
    assert.deepEqual(findUnsupportedFields(masqueradeVmi()), []);
    const sriov = setPath(masqueradeVmi(), 'spec.domain.devices.interfaces.0.sriov', {});
    assert.deepEqual(
      findUnsupportedFields(sriov).map((error) => error.field),
      ['spec.domain.devices.interfaces[0].sriov'],
    );
  });

  for (const raw of [null, undefined, 'vmi', 42, [1, 2]]) {
    it(`reports nothing for a top-level ${JSON.stringify(raw) ?? 'undefined'}`, () => {
      assert.deepEqual(findUnsupportedFields(raw), []);
    });
  }

  it('tells the user what to do', () => {
    const [error] = findUnsupportedFields(setPath(ephemeralVmi(), 'spec.domain.devices.gpus', [{ name: 'g' }]));
    assert.match(error?.message ?? '', /podvirt does not support this field; remove it/);
  });
});
