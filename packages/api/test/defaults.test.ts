import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  applyDefaults,
  deriveFirmwareUuid,
  nameBasedUuid,
  findUnsupportedFields,
  validateVmi,
  type DefaultsOptions,
  type VirtualMachineInstance,
} from '../src/index.js';
import { deepFreeze, ephemeralVmi, fullVmi, masqueradeVmi, setPath, type Json } from './fixtures.js';

type Row = [title: string, base: () => Json, changes: [string, unknown][], expected: [string, unknown][], options?: DefaultsOptions];

function get(value: unknown, path: string): unknown {
  return path.split('.').reduce<unknown>((node, key) => (node as Record<string, unknown> | undefined)?.[key], value);
}

const D = 'spec.domain';
const DISK0 = 'spec.domain.devices.disks.0';
const VOL0 = 'spec.volumes.0.containerDisk';

const ROWS: Row[] = [
  [
    'a minimal VMI gets every default',
    ephemeralVmi,
    [],
    [
      [`${D}.machine.type`, 'q35'],
      ['spec.terminationGracePeriodSeconds', 0],
      [`${D}.memory.guest`, '128Mi'],
      [`${D}.resources.requests.memory`, '128Mi'],
      [`${D}.cpu`, { sockets: 1, cores: 1, threads: 1 }],
      [`${D}.firmware.uuid`, deriveFirmwareUuid('vmi-ephemeral')],
      [`${D}.features`, { acpi: { enabled: true } }],
      [`${DISK0}.disk.bus`, 'virtio'],
      [`${D}.devices.autoattachSerialConsole`, true],
      [`${D}.devices.autoattachMemBalloon`, true],
      [`${D}.devices.autoattachGraphicsDevice`, true],
      [`${VOL0}.imagePullPolicy`, 'IfNotPresent'],
      ['status.memory', { guestAtBoot: '128Mi', guestCurrent: '128Mi', guestRequested: '128Mi' }],
      ['status.currentCPUTopology', { sockets: 1, cores: 1, threads: 1 }],
      // virt-api's SetDefaultNetworkInterface: KubeVirt's default binding is bridge.
      [`${D}.devices.interfaces`, [{ name: 'default', bridge: {} }]],
      ['spec.networks', [{ name: 'default', pod: {} }]],
      [`${D}.cpu.model`, undefined],
    ],
  ],
  ['grace period unset becomes 30', ephemeralVmi, [['spec.terminationGracePeriodSeconds', undefined]], [['spec.terminationGracePeriodSeconds', 30]]],
  ['grace period from options', ephemeralVmi, [['spec.terminationGracePeriodSeconds', undefined]], [['spec.terminationGracePeriodSeconds', 5]], { terminationGracePeriodSeconds: 5 }],
  ['explicit machine type kept', ephemeralVmi, [[`${D}.machine.type`, 'pc-q35-8.2']], [[`${D}.machine.type`, 'pc-q35-8.2']]],
  ['empty machine type defaulted', ephemeralVmi, [[`${D}.machine`, { type: '' }]], [[`${D}.machine.type`, 'q35']]],
  ['machine type from options', ephemeralVmi, [], [[`${D}.machine.type`, 'pc-q35-9.0']], { machineType: 'pc-q35-9.0' }],
  [
    'a memory limit alone is request and guest',
    ephemeralVmi,
    [[`${D}.resources`, { limits: { memory: '1Gi' } }]],
    [[`${D}.resources.requests.memory`, '1Gi'], [`${D}.memory.guest`, '1Gi'], [`${D}.resources.limits.memory`, '1Gi']],
  ],
  [
    'guest memory alone becomes the request',
    ephemeralVmi,
    [[`${D}.resources`, undefined], [`${D}.memory`, { guest: '256Mi' }]],
    [[`${D}.resources.requests.memory`, '256Mi'], [`${D}.memory.guest`, '256Mi']],
  ],
  [
    'explicit guest memory kept below the request',
    ephemeralVmi,
    [[`${D}.memory`, { guest: '100Mi' }]],
    [[`${D}.memory.guest`, '100Mi'], [`${D}.resources.requests.memory`, '128Mi']],
  ],
  ['numeric memory copied as is', ephemeralVmi, [[`${D}.resources.requests.memory`, 134217728]], [[`${D}.memory.guest`, 134217728]]],
  [
    'a cpu limit gives sockets and the request',
    ephemeralVmi,
    [[`${D}.resources.limits`, { cpu: '3' }]],
    [[`${D}.cpu`, { sockets: 3, cores: 1, threads: 1 }], [`${D}.resources.requests.cpu`, '3']],
  ],
  ['a fractional cpu request rounds up to one socket', ephemeralVmi, [[`${D}.resources.requests.cpu`, '500m']], [[`${D}.cpu`, { sockets: 1, cores: 1, threads: 1 }]]],
  ['2500m rounds up to three sockets', ephemeralVmi, [[`${D}.resources.requests.cpu`, '2500m']], [[`${D}.cpu`, { sockets: 3, cores: 1, threads: 1 }]]],
  ['the limit wins over the request for sockets', ephemeralVmi, [[`${D}.resources`, { requests: { memory: '1Gi', cpu: '1' }, limits: { cpu: '2' } }]], [[`${D}.cpu.sockets`, 2]]],
  ['explicit cores fill the rest with one', ephemeralVmi, [[`${D}.cpu`, { cores: 2 }]], [[`${D}.cpu`, { cores: 2, sockets: 1, threads: 1 }]]],
  ['explicit topology wins over a cpu request', ephemeralVmi, [[`${D}.cpu`, { threads: 2 }], [`${D}.resources.requests.cpu`, '4']], [[`${D}.cpu`, { threads: 2, sockets: 1, cores: 1 }]]],
  ['a disk without a kind is a disk', ephemeralVmi, [[`${DISK0}.disk`, undefined]], [[`${DISK0}.disk`, { bus: 'virtio' }]]],
  ['a disk without a bus gets virtio', ephemeralVmi, [[`${DISK0}.disk`, {}]], [[`${DISK0}.disk.bus`, 'virtio']]],
  ['the disk bus comes from options', ephemeralVmi, [[`${DISK0}.disk`, { readonly: true }]], [[`${DISK0}.disk`, { readonly: true, bus: 'sata' }]], { diskBus: 'sata' }],
  ['an explicit bus is kept', ephemeralVmi, [[`${DISK0}.disk`, { bus: 'scsi' }]], [[`${DISK0}.disk.bus`, 'scsi']]],
  ['a cdrom is sata, read-only, closed', ephemeralVmi, [[`${DISK0}.disk`, undefined], [`${DISK0}.cdrom`, {}]], [[`${DISK0}.cdrom`, { bus: 'sata', readonly: true, tray: 'closed' }], [`${DISK0}.disk`, undefined]]],
  ['an explicit cdrom is kept', ephemeralVmi, [[`${DISK0}.disk`, undefined], [`${DISK0}.cdrom`, { bus: 'scsi', readonly: false }]], [[`${DISK0}.cdrom`, { bus: 'scsi', readonly: false, tray: 'closed' }]]],
  ['a watchdog is an i6300esb that resets', ephemeralVmi, [[`${D}.devices.watchdog`, { name: 'w' }]], [[`${D}.devices.watchdog`, { name: 'w', i6300esb: { action: 'reset' } }]]],
  ['an explicit watchdog action is kept', ephemeralVmi, [[`${D}.devices.watchdog`, { name: 'w', i6300esb: { action: 'poweroff' } }]], [[`${D}.devices.watchdog.i6300esb.action`, 'poweroff']]],
  [
    'features: acpi off stays off, a named feature is on',
    ephemeralVmi,
    [[`${D}.features`, { acpi: { enabled: false }, apic: {} }]],
    [[`${D}.features`, { acpi: { enabled: false }, apic: { enabled: true } }]],
  ],
  ['the default pod interface takes the configured binding', ephemeralVmi, [], [[`${D}.devices.interfaces`, [{ name: 'default', masquerade: {} }]]], { networkInterface: 'masquerade' }],
  [
    'autoattachPodInterface false: no interface, no network',
    ephemeralVmi,
    [[`${D}.devices.autoattachPodInterface`, false]],
    [[`${D}.devices.interfaces`, undefined], ['spec.networks', undefined], [`${D}.devices.autoattachPodInterface`, false]],
  ],
  [
    'named interfaces are kept as they are, nothing merged in',
    masqueradeVmi,
    [],
    [[`${D}.devices.interfaces`, [{ name: 'default', masquerade: {}, ports: [{ name: 'http', port: 80 }] }]], ['spec.networks', [{ name: 'default', pod: {} }]]],
  ],
  ['autoattach false is kept', ephemeralVmi, [[`${D}.devices.autoattachSerialConsole`, false]], [[`${D}.devices.autoattachSerialConsole`, false]]],
  ['an explicit firmware uuid is kept', fullVmi, [], [[`${D}.firmware.uuid`, '5d307ca9-b3ef-428c-8861-06e72d69f223']]],
  ['no name, no derived uuid', ephemeralVmi, [['metadata.name', undefined], ['metadata.generateName', 'vmi-']], [[`${D}.firmware`, {}]]],
  ['an untagged image is pulled always', ephemeralVmi, [[`${VOL0}.image`, 'quay.io/kubevirt/cirros']], [[`${VOL0}.imagePullPolicy`, 'Always']]],
  ['a latest image is pulled always', ephemeralVmi, [[`${VOL0}.image`, 'cirros:latest']], [[`${VOL0}.imagePullPolicy`, 'Always']]],
  ['a registry port is not a tag', ephemeralVmi, [[`${VOL0}.image`, 'registry:5000/cirros']], [[`${VOL0}.imagePullPolicy`, 'Always']]],
  ['a digest is pulled if not present', ephemeralVmi, [[`${VOL0}.image`, 'cirros@sha256:0123abcd']], [[`${VOL0}.imagePullPolicy`, 'IfNotPresent']]],
  ['an explicit pull policy is kept', ephemeralVmi, [[`${VOL0}.imagePullPolicy`, 'Never']], [[`${VOL0}.imagePullPolicy`, 'Never']]],
  ['a kernel boot image gets a pull policy', fullVmi, [], [[`${D}.firmware.kernelBoot.container.imagePullPolicy`, 'IfNotPresent']]],
  [
    'listed timers are present',
    fullVmi,
    [],
    [[`${D}.clock.timer`, { rtc: { tickPolicy: 'catchup', track: 'guest', present: true }, pit: { present: false } }]],
  ],
  ['a recorded memory status is kept', ephemeralVmi, [['status', { memory: { guestAtBoot: '64Mi' } }]], [['status.memory', { guestAtBoot: '64Mi' }]]],
  ['unknown fields are carried over', ephemeralVmi, [[`${D}.devices.gpus`, [{ name: 'gpu1', deviceName: 'nvidia.com/TU104GL' }]]], [[`${D}.devices.gpus.0.name`, 'gpu1']]],
  [
    'a hotpluggable volume without a disk gets one on bus scsi',
    ephemeralVmi,
    [['spec.volumes.1', { name: 'hp', persistentVolumeClaim: { claimName: 'c', hotpluggable: true } }]],
    [
      ['spec.domain.devices.disks.1.disk.bus', 'scsi'],
      [`${DISK0}.disk.bus`, 'virtio'],
    ],
  ],
];

function defaulted(base: () => Json, changes: [string, unknown][], options?: DefaultsOptions): VirtualMachineInstance {
  const vmi = base();
  for (const [path, value] of changes) setPath(vmi, path, value);
  return applyDefaults(vmi as unknown as VirtualMachineInstance, options);
}

describe('applyDefaults', () => {
  for (const [title, base, changes, expected, options] of ROWS) {
    it(title, () => {
      const result = defaulted(base, changes, options);
      for (const [path, value] of expected) assert.deepEqual(get(result, path), value, path);
    });
  }

  for (const [name, base] of [['ephemeral', ephemeralVmi], ['full', fullVmi], ['masquerade', masqueradeVmi]] as const) {
    it(`leaves the ${name} input untouched, is idempotent, and stays valid`, () => {
      const input = deepFreeze(base()) as unknown as VirtualMachineInstance;
      const once = applyDefaults(input);
      assert.deepEqual(input, base());
      assert.notEqual(once, input);
      assert.deepEqual(applyDefaults(once), once);
      assert.deepEqual(validateVmi(once), []);
      // Defaulting adds nothing outside the allow-list (the masquerade fixture starts outside it).
      assert.deepEqual(findUnsupportedFields(once), findUnsupportedFields(input));
    });
  }
});

describe('firmware uuid', () => {
  it('is a version 5 UUID (RFC 4122 test vector)', () => {
    // The example of Python's uuid module documentation: uuid5(NAMESPACE_DNS, 'python.org').
    assert.equal(nameBasedUuid('6ba7b810-9dad-11d1-80b4-00c04fd430c8', 'python.org'), '886313e1-3b8a-5372-9b90-0c9aee199e5d');
  });

  it('is stable per name and differs between names', () => {
    assert.equal(deriveFirmwareUuid('testvmi'), deriveFirmwareUuid('testvmi'));
    assert.notEqual(deriveFirmwareUuid('testvmi'), deriveFirmwareUuid('testvmi2'));
    assert.match(deriveFirmwareUuid('testvmi'), /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});
