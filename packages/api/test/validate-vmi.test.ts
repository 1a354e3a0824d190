import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatFieldErrors, validateVmi } from '../src/index.js';
import { ephemeralVmi, fullVmi, masqueradeVmi, setPath, type Json } from './fixtures.js';

type Row = [title: string, base: () => Json, changes: [path: string, value: unknown][], expected: string[]];

const D = 'spec.domain';
const DEV = 'spec.domain.devices';
const CI = 'spec.volumes[1].cloudInitNoCloud';
const CI_SET = 'spec.volumes.1.cloudInitNoCloud';
const KB = 'spec.domain.firmware.kernelBoot';

const ROWS: Row[] = [
  // whole-object and top-level shape
  ['spec null', fullVmi, [['spec', null]], ['spec Required']],
  ['spec an array', fullVmi, [['spec', []]], ['spec TypeInvalid']],
  ['spec a string', fullVmi, [['spec', 'x']], ['spec TypeInvalid']],
  ['domain missing', ephemeralVmi, [['spec.domain', null]], ['spec.domain Required']],
  ['devices missing', ephemeralVmi, [['spec.domain.devices', undefined]], [`${DEV} Required`]],
  ['devices an array', ephemeralVmi, [['spec.domain.devices', []]], [`${DEV} TypeInvalid`]],
  ['apiVersion unknown', fullVmi, [['apiVersion', 'kubevirt.io/v2']], ['apiVersion NotSupported']],
  ['apiVersion v1alpha3', fullVmi, [['apiVersion', 'kubevirt.io/v1alpha3']], []],
  ['apiVersion missing', fullVmi, [['apiVersion', undefined]], ['apiVersion Required']],
  ['kind wrong', fullVmi, [['kind', 'Pod']], ['kind Invalid']],
  ['kind a number', fullVmi, [['kind', 7]], ['kind TypeInvalid']],
  // metadata
  ['metadata null', fullVmi, [['metadata', null]], ['metadata Required']],
  ['name missing', fullVmi, [['metadata.name', undefined]], ['metadata.name Required']],
  ['generateName instead of name', fullVmi, [['metadata.name', undefined], ['metadata.generateName', 'vmi-']], []],
  ['name uppercase', fullVmi, [['metadata.name', 'TestVMI']], ['metadata.name Invalid']],
  ['name too long', fullVmi, [['metadata.name', 'a'.repeat(254)]], ['metadata.name Invalid']],
  ['name with dots', fullVmi, [['metadata.name', 'vm.example.com']], []],
  ['namespace with a dot', fullVmi, [['metadata.namespace', 'a.b']], ['metadata.namespace Invalid']],
  ['label value not a string', fullVmi, [['metadata.labels', { x: true }]], ['metadata.labels[x] TypeInvalid']],
  ['annotations an array', fullVmi, [['metadata.annotations', ['a']]], ['metadata.annotations TypeInvalid']],
  ['generation negative', fullVmi, [['metadata.generation', -1]], ['metadata.generation Invalid']],
  ['finalizers a string', fullVmi, [['metadata.finalizers', 'x']], ['metadata.finalizers TypeInvalid']],
  ['finalizer a number', fullVmi, [['metadata.finalizers', [1]]], ['metadata.finalizers[0] TypeInvalid']],
  [
    'owner reference empty',
    fullVmi,
    [['metadata.ownerReferences', [{}]]],
    ['apiVersion', 'kind', 'name', 'uid'].map((key) => `metadata.ownerReferences[0].${key} Required`),
  ],
  ['deletionGracePeriodSeconds fractional', fullVmi, [['metadata.deletionGracePeriodSeconds', 1.5]], ['metadata.deletionGracePeriodSeconds TypeInvalid']],
  // resources and memory
  ['memory below the boot minimum', ephemeralVmi, [[`${D}.resources.requests.memory`, '64Mi']], [`${D}.resources.requests.memory Invalid`]],
  ['memory at the boot minimum', ephemeralVmi, [[`${D}.resources.requests.memory`, '72Mi']], []],
  ['memory as a JSON number', ephemeralVmi, [[`${D}.resources.requests.memory`, 134217728]], []],
  ['no memory at all', ephemeralVmi, [[`${D}.resources`, undefined]], [`${D}.resources.requests.memory Required`]],
  ['memory only as a limit', ephemeralVmi, [[`${D}.resources`, { limits: { memory: '1Gi' } }]], []],
  ['memory malformed', ephemeralVmi, [[`${D}.resources.requests.memory`, 'lots']], [`${D}.resources.requests.memory Invalid`]],
  ['memory zero', ephemeralVmi, [[`${D}.resources.requests.memory`, '0']], [`${D}.resources.requests.memory Invalid`]],
  ['memory negative', ephemeralVmi, [[`${D}.resources.requests.memory`, '-128Mi']], [`${D}.resources.requests.memory Invalid`]],
  ['memory an object', ephemeralVmi, [[`${D}.resources.requests.memory`, { value: 1 }]], [`${D}.resources.requests.memory TypeInvalid`]],
  ['requests an array', fullVmi, [[`${D}.resources.requests`, []]], [`${D}.resources.requests TypeInvalid`]],
  ['memory request above limit', fullVmi, [[`${D}.resources.requests.memory`, '512Mi']], [`${D}.resources.requests.memory Invalid`]],
  ['cpu request above limit', fullVmi, [[`${D}.resources.requests.cpu`, '2']], [`${D}.resources.requests.cpu Invalid`]],
  ['cpu request zero', fullVmi, [[`${D}.resources.requests.cpu`, 0]], [`${D}.resources.requests.cpu Invalid`]],
  ['guest above limit', fullVmi, [[`${D}.memory.guest`, '300Mi']], [`${D}.memory.guest Invalid`]],
  ['guest below minimum', fullVmi, [[`${D}.memory.guest`, '64Mi']], [`${D}.memory.guest Invalid`]],
  ['guest malformed', fullVmi, [[`${D}.memory.guest`, '1 GB']], [`${D}.memory.guest Invalid`]],
  ['memory section an array', fullVmi, [[`${D}.memory`, []]], [`${D}.memory TypeInvalid`]],
  // cpu and machine
  ['cores zero', fullVmi, [[`${D}.cpu.cores`, 0]], [`${D}.cpu.cores Invalid`]],
  ['sockets negative', fullVmi, [[`${D}.cpu.sockets`, -1]], [`${D}.cpu.sockets Invalid`]],
  ['threads fractional', fullVmi, [[`${D}.cpu.threads`, 2.5]], [`${D}.cpu.threads TypeInvalid`]],
  ['cores a string', fullVmi, [[`${D}.cpu.cores`, '2']], [`${D}.cpu.cores TypeInvalid`]],
  ['cores above uint32', fullVmi, [[`${D}.cpu.cores`, 2 ** 32]], [`${D}.cpu.cores Invalid`]],
  ['cpu model a number', fullVmi, [[`${D}.cpu.model`, 5]], [`${D}.cpu.model TypeInvalid`]],
  ['machine pc', fullVmi, [[`${D}.machine.type`, 'pc']], [`${D}.machine.type NotSupported`]],
  ['machine i440fx', fullVmi, [[`${D}.machine.type`, 'pc-i440fx-8.2']], [`${D}.machine.type NotSupported`]],
  ['machine versioned q35', fullVmi, [[`${D}.machine.type`, 'pc-q35-8.2']], []],
  ['machine empty', fullVmi, [[`${D}.machine.type`, '']], []],
  // firmware and kernel boot
  ['uuid malformed', fullVmi, [[`${D}.firmware.uuid`, 'not-a-uuid']], [`${D}.firmware.uuid Invalid`]],
  ['uuid uppercase', fullVmi, [[`${D}.firmware.uuid`, '5D307CA9-B3EF-428C-8861-06E72D69F223']], []],
  ['serial a number', fullVmi, [[`${D}.firmware.serial`, 1]], [`${D}.firmware.serial TypeInvalid`]],
  ['kernelBoot without container', fullVmi, [[`${KB}.container`, undefined]], [`${KB}.container Required`]],
  ['kernelBoot image empty', fullVmi, [[`${KB}.container.image`, '']], [`${KB}.container.image Required`]],
  ['kernelBoot without paths', fullVmi, [[`${KB}.container.kernelPath`, undefined], [`${KB}.container.initrdPath`, undefined]], [`${KB}.container Required`]],
  ['kernelBoot with initrd only', fullVmi, [[`${KB}.container.kernelPath`, undefined], [`${KB}.kernelArgs`, undefined]], []],
  ['kernelArgs without a kernel', fullVmi, [[`${KB}.container.kernelPath`, undefined]], [`${KB}.kernelArgs Invalid`]],
  ['kernel path relative', fullVmi, [[`${KB}.container.kernelPath`, 'vmlinuz']], [`${KB}.container.kernelPath Invalid`]],
  ['kernel path escaping', fullVmi, [[`${KB}.container.initrdPath`, '/boot/../../etc/shadow']], [`${KB}.container.initrdPath Invalid`]],
  ['kernel pull policy unknown', fullVmi, [[`${KB}.container.imagePullPolicy`, 'Sometimes']], [`${KB}.container.imagePullPolicy NotSupported`]],
  ['kernelArgs a list', fullVmi, [[`${KB}.kernelArgs`, ['a']]], [`${KB}.kernelArgs TypeInvalid`]],
  // features and clock
  ['features an array', fullVmi, [[`${D}.features`, []]], [`${D}.features TypeInvalid`]],
  ['acpi enabled a string', fullVmi, [[`${D}.features.acpi.enabled`, 'true']], [`${D}.features.acpi.enabled TypeInvalid`]],
  ['apic eoi a number', fullVmi, [[`${D}.features.apic.endOfInterrupt`, 1]], [`${D}.features.apic.endOfInterrupt TypeInvalid`]],
  ['both utc and timezone', fullVmi, [[`${D}.clock.timezone`, 'Europe/Berlin']], [`${D}.clock Invalid`]],
  ['timezone alone', fullVmi, [[`${D}.clock.utc`, undefined], [`${D}.clock.timezone`, 'America/New_York']], []],
  ['timezone escaping', fullVmi, [[`${D}.clock.utc`, undefined], [`${D}.clock.timezone`, '../etc']], [`${D}.clock.timezone Invalid`]],
  ['utc offset a string', fullVmi, [[`${D}.clock.utc.offsetSeconds`, 'x']], [`${D}.clock.utc.offsetSeconds TypeInvalid`]],
  ['rtc merge policy', fullVmi, [[`${D}.clock.timer.rtc.tickPolicy`, 'merge']], [`${D}.clock.timer.rtc.tickPolicy NotSupported`]],
  ['hpet merge policy', fullVmi, [[`${D}.clock.timer.hpet`, { tickPolicy: 'merge' }]], []],
  ['rtc track host', fullVmi, [[`${D}.clock.timer.rtc.track`, 'host']], [`${D}.clock.timer.rtc.track NotSupported`]],
  ['kvm timer present a string', fullVmi, [[`${D}.clock.timer.kvm`, { present: 'yes' }]], [`${D}.clock.timer.kvm.present TypeInvalid`]],
  // disks
  ['disks an object', fullVmi, [[`${DEV}.disks`, {}]], [`${DEV}.disks TypeInvalid`]],
  ['disk null', fullVmi, [[`${DEV}.disks.0`, null]], [`${DEV}.disks[0] Required`]],
  ['disk name empty', fullVmi, [[`${DEV}.disks.0.name`, '']], [`${DEV}.disks[0].name Required`]],
  ['disk name duplicate', fullVmi, [[`${DEV}.disks.1.name`, 'containerdisk']], [`${DEV}.disks[1].name Duplicate`]],
  [
    'disk name not a DNS label',
    fullVmi,
    [[`${DEV}.disks.0.name`, 'Bad_Name']],
    [`${DEV}.disks[0].name Invalid`, `${DEV}.disks[0].name NotFound`],
  ],
  ['disk bus ide', fullVmi, [[`${DEV}.disks.0.disk.bus`, 'ide']], [`${DEV}.disks[0].disk.bus NotSupported`]],
  ['cdrom bus virtio', fullVmi, [[`${DEV}.disks.3.cdrom.bus`, 'virtio']], [`${DEV}.disks[3].cdrom.bus NotSupported`]],
  ['cdrom tray ajar', fullVmi, [[`${DEV}.disks.3.cdrom.tray`, 'ajar']], [`${DEV}.disks[3].cdrom.tray NotSupported`]],
  ['disk and cdrom', fullVmi, [[`${DEV}.disks.0.cdrom`, {}]], [`${DEV}.disks[0] Invalid`]],
  ['disk target a string', fullVmi, [[`${DEV}.disks.0.disk`, 'virtio']], [`${DEV}.disks[0].disk TypeInvalid`]],
  ['readonly a string', fullVmi, [[`${DEV}.disks.0.disk.readonly`, 'yes']], [`${DEV}.disks[0].disk.readonly TypeInvalid`]],
  ['bootOrder zero', fullVmi, [[`${DEV}.disks.0.bootOrder`, 0]], [`${DEV}.disks[0].bootOrder Invalid`]],
  ['bootOrder a string', fullVmi, [[`${DEV}.disks.0.bootOrder`, '1']], [`${DEV}.disks[0].bootOrder TypeInvalid`]],
  ['bootOrder reused', fullVmi, [[`${DEV}.disks.2.bootOrder`, 1]], [`${DEV}.disks[2].bootOrder Duplicate`]],
  ['serial with a slash', fullVmi, [[`${DEV}.disks.1.serial`, 'a/b']], [`${DEV}.disks[1].serial Invalid`]],
  ['cache unsafe', fullVmi, [[`${DEV}.disks.0.cache`, 'unsafe']], [`${DEV}.disks[0].cache NotSupported`]],
  ['too many disks', ephemeralVmi, [[`${DEV}.disks`, Array.from({ length: 257 }, () => ({ name: 'containerdisk' }))]], [`${DEV}.disks TooMany`, ...Array.from({ length: 256 }, (_, i) => `${DEV}.disks[${i + 1}].name Duplicate`)]],
  // watchdog, rng, autoattach
  ['watchdog without name', fullVmi, [[`${DEV}.watchdog.name`, undefined]], [`${DEV}.watchdog.name Required`]],
  ['watchdog action unknown', fullVmi, [[`${DEV}.watchdog.i6300esb.action`, 'explode']], [`${DEV}.watchdog.i6300esb.action NotSupported`]],
  ['two watchdog devices', fullVmi, [[`${DEV}.watchdog.diag288`, {}]], [`${DEV}.watchdog Invalid`]],
  ['rng a string', fullVmi, [[`${DEV}.rng`, 'yes']], [`${DEV}.rng TypeInvalid`]],
  ['autoattach a string', fullVmi, [[`${DEV}.autoattachSerialConsole`, 'false']], [`${DEV}.autoattachSerialConsole TypeInvalid`]],
  // volumes
  ['volumes an object', fullVmi, [['spec.volumes', {}]], ['spec.volumes TypeInvalid']],
  ['volume without source', fullVmi, [['spec.volumes.0', { name: 'containerdisk' }]], ['spec.volumes[0] Required']],
  ['volume with two sources', fullVmi, [['spec.volumes.0.emptyDisk', { capacity: '1Gi' }]], ['spec.volumes[0] Invalid']],
  ['volume with an unsupported second source', fullVmi, [['spec.volumes.0.persistentVolumeClaim', { claimName: 'x' }]], ['spec.volumes[0] Invalid']],
  ['volume name duplicate', fullVmi, [['spec.volumes.1.name', 'containerdisk']], ['spec.volumes[1].name Duplicate', `${DEV}.disks[1].name NotFound`]],
  ['containerDisk image empty', fullVmi, [['spec.volumes.0.containerDisk.image', '']], ['spec.volumes[0].containerDisk.image Required']],
  ['containerDisk path relative', fullVmi, [['spec.volumes.0.containerDisk.path', 'disk.img']], ['spec.volumes[0].containerDisk.path Invalid']],
  ['containerDisk pull policy unknown', fullVmi, [['spec.volumes.0.containerDisk.imagePullPolicy', 'Sometimes']], ['spec.volumes[0].containerDisk.imagePullPolicy NotSupported']],
  ['emptyDisk without capacity', fullVmi, [['spec.volumes.2.emptyDisk.capacity', undefined]], ['spec.volumes[2].emptyDisk.capacity Required']],
  ['emptyDisk capacity zero', fullVmi, [['spec.volumes.2.emptyDisk.capacity', '0']], ['spec.volumes[2].emptyDisk.capacity Invalid']],
  ['emptyDisk capacity a boolean', fullVmi, [['spec.volumes.2.emptyDisk.capacity', true]], ['spec.volumes[2].emptyDisk.capacity TypeInvalid']],
  ['cloud-init empty', fullVmi, [['spec.volumes.1.cloudInitNoCloud', {}]], [`${CI} Required`]],
  ['cloud-init two user data', fullVmi, [[`${CI_SET}.userDataBase64`, 'Zm9v']], [`${CI} Invalid`]],
  ['cloud-init bad base64', fullVmi, [[`${CI_SET}.networkDataBase64`, 'not base64!']], [`${CI}.networkDataBase64 Invalid`]],
  ['cloud-init base64 with newlines', fullVmi, [[`${CI_SET}.networkDataBase64`, 'dmVy\nc2lv\nbjogMgo=']], []],
  ['cloud-init secretRef without name', fullVmi, [[`${CI_SET}.secretRef`, {}]], [`${CI}.secretRef.name Required`, `${CI} Invalid`]],
  ['cloud-init network data only', fullVmi, [[`${CI_SET}.userData`, undefined]], []],
  ['pvc without a claim name', fullVmi, [['spec.volumes.3', { name: 'hostdisk', persistentVolumeClaim: { readOnly: true } }]], ['spec.volumes[3].persistentVolumeClaim.claimName Required']],
  ['pvc claim in another namespace', fullVmi, [['spec.volumes.3', { name: 'hostdisk', persistentVolumeClaim: { claimName: 'other/disk' } }]], ['spec.volumes[3].persistentVolumeClaim.claimName Invalid']],
  ['pvc readOnly not a boolean', fullVmi, [['spec.volumes.3', { name: 'hostdisk', persistentVolumeClaim: { claimName: 'disk', readOnly: 'yes' } }]], ['spec.volumes[3].persistentVolumeClaim.readOnly TypeInvalid']],
  ['pvc fine', fullVmi, [['spec.volumes.3', { name: 'hostdisk', persistentVolumeClaim: { claimName: 'disk', readOnly: true } }]], []],
  ['shareable disk with writeback cache', fullVmi, [['spec.domain.devices.disks.0.shareable', true], ['spec.domain.devices.disks.0.cache', 'writeback']], ['spec.domain.devices.disks[0].cache Invalid']],
  ['disk io unknown', fullVmi, [['spec.domain.devices.disks.0.io', 'uring']], ['spec.domain.devices.disks[0].io NotSupported']],
  ['hostDisk type unknown', fullVmi, [['spec.volumes.3.hostDisk.type', 'File']], ['spec.volumes[3].hostDisk.type NotSupported']],
  ['hostDisk type missing', fullVmi, [['spec.volumes.3.hostDisk.type', undefined]], ['spec.volumes[3].hostDisk.type Required']],
  ['hostDisk create without capacity', fullVmi, [['spec.volumes.3.hostDisk.capacity', undefined]], ['spec.volumes[3].hostDisk.capacity Required']],
  ['hostDisk existing without capacity', fullVmi, [['spec.volumes.3.hostDisk.capacity', undefined], ['spec.volumes.3.hostDisk.type', 'Disk']], []],
  ['hostDisk path relative', fullVmi, [['spec.volumes.3.hostDisk.path', 'disk.img']], ['spec.volumes[3].hostDisk.path Invalid']],
  ['hostDisk shared a string', fullVmi, [['spec.volumes.3.hostDisk.shared', 'no']], ['spec.volumes[3].hostDisk.shared TypeInvalid']],
  // KubeVirt's defaulting gives a volume without a disk one of its own name.
  ['volume without a disk', ephemeralVmi, [['spec.volumes.1', { name: 'extra', emptyDisk: { capacity: '1Gi' } }]], []],
  // spec scalars
  ['grace period negative', fullVmi, [['spec.terminationGracePeriodSeconds', -1]], ['spec.terminationGracePeriodSeconds Invalid']],
  ['grace period a string', fullVmi, [['spec.terminationGracePeriodSeconds', '30']], ['spec.terminationGracePeriodSeconds TypeInvalid']],
  ['architecture amd64', fullVmi, [['spec.architecture', 'amd64']], []],
  ['architecture arm64', fullVmi, [['spec.architecture', 'arm64']], ['spec.architecture NotSupported']],
  [
    'a VMI as KubeVirt serves it back',
    ephemeralVmi,
    [
      ['metadata.creationTimestamp', null],
      ['spec.domain.cpu', { model: 'host-model', cores: 1, sockets: 1, threads: 1 }],
      ['spec.domain.features', { acpi: { enabled: true } }],
      ['spec.domain.firmware', { uuid: '5d307ca9-b3ef-428c-8861-06e72d69f223' }],
      ['spec.domain.machine', { type: 'q35' }],
      ['spec.domain.devices.disks.0.disk.bus', 'sata'],
      ['spec.architecture', 'amd64'],
      ['status', { phase: 'Pending', phaseTransitionTimestamps: [{ phase: 'Pending', phaseTransitionTimestamp: '2024-01-01T00:00:00Z' }] }],
    ],
    [],
  ],
  ['grace period zero', fullVmi, [['spec.terminationGracePeriodSeconds', 0]], []],
  ['node selector value a number', fullVmi, [['spec.nodeSelector', { a: 1 }]], ['spec.nodeSelector[a] TypeInvalid']],
  ['node selector an array', fullVmi, [['spec.nodeSelector', []]], ['spec.nodeSelector TypeInvalid']],
  ['eviction strategy LiveMigrate', fullVmi, [['spec.evictionStrategy', 'LiveMigrate']], []],
  ['eviction strategy External', fullVmi, [['spec.evictionStrategy', 'External']], []],
  ['eviction strategy unknown', fullVmi, [['spec.evictionStrategy', 'Migrate']], ['spec.evictionStrategy NotSupported']],
  ['eviction strategy lower case', fullVmi, [['spec.evictionStrategy', 'livemigrate']], ['spec.evictionStrategy NotSupported']],
  ['eviction strategy a number', fullVmi, [['spec.evictionStrategy', 1]], ['spec.evictionStrategy TypeInvalid']],
  ['evacuation node a number', fullVmi, [['status.evacuationNodeName', 1]], ['status.evacuationNodeName TypeInvalid']],
  // status
  ['status phase unknown', fullVmi, [['status', { phase: 'Exploded' }]], ['status.phase NotSupported']],
  ['status phase empty', fullVmi, [['status', { phase: '' }]], []],
  ['status condition without type', fullVmi, [['status', { conditions: [{ status: 'True' }] }]], ['status.conditions[0].type Required']],
  ['status a number', fullVmi, [['status', 5]], ['status TypeInvalid']],
  // interfaces and networks
  ['pod network with masquerade', masqueradeVmi, [], []],
  ['interface without network', masqueradeVmi, [[`${DEV}.interfaces.0.name`, 'other']], [`${DEV}.interfaces[0].name NotFound`, 'spec.networks[0].name NotFound']],
  ['network without source', masqueradeVmi, [['spec.networks.0.pod', undefined]], ['spec.networks[0] Required']],
  ['two bindings', masqueradeVmi, [[`${DEV}.interfaces.0.bridge`, {}]], [`${DEV}.interfaces[0] Invalid`]],
  ['mac malformed', masqueradeVmi, [[`${DEV}.interfaces.0.macAddress`, 'zz']], [`${DEV}.interfaces[0].macAddress Invalid`]],
  ['mac multicast', masqueradeVmi, [[`${DEV}.interfaces.0.macAddress`, '01:00:5e:00:00:01']], [`${DEV}.interfaces[0].macAddress Invalid`]],
  ['pci address malformed', masqueradeVmi, [[`${DEV}.interfaces.0.pciAddress`, '05:01.0']], [`${DEV}.interfaces[0].pciAddress Invalid`]],
  ['duplicate interface name', masqueradeVmi, [[`${DEV}.interfaces.1`, { name: 'default', bridge: {} }]], [`${DEV}.interfaces[1].name Duplicate`]],
  ['network without interface', masqueradeVmi, [[`${DEV}.interfaces`, []]], ['spec.networks[0].name NotFound']],
  ['nic model unknown', masqueradeVmi, [[`${DEV}.interfaces.0.model`, 'virtio-net']], [`${DEV}.interfaces[0].model NotSupported`]],
  ['port out of range', masqueradeVmi, [[`${DEV}.interfaces.0.ports.0.port`, 70000]], [`${DEV}.interfaces[0].ports[0].port Invalid`]],
  ['port missing', masqueradeVmi, [[`${DEV}.interfaces.0.ports.0.port`, undefined]], [`${DEV}.interfaces[0].ports[0].port Required`]],
  ['port protocol SCTP', masqueradeVmi, [[`${DEV}.interfaces.0.ports.0.protocol`, 'SCTP']], [`${DEV}.interfaces[0].ports[0].protocol NotSupported`]],
  [
    'two pod networks',
    masqueradeVmi,
    [['spec.networks.1', { name: 'second', pod: {} }]],
    ['spec.networks[1].pod Duplicate', 'spec.networks[1].name NotFound'],
  ],
  ['a hotpluggable claim on bus scsi', ephemeralVmi, [['spec.volumes.1', { name: 'hp', persistentVolumeClaim: { claimName: 'c', hotpluggable: true } }], [`${DEV}.disks.1`, { name: 'hp', disk: { bus: 'scsi' } }]], []],
  ['a hotpluggable claim on bus virtio', ephemeralVmi, [['spec.volumes.1', { name: 'hp', persistentVolumeClaim: { claimName: 'c', hotpluggable: true } }], [`${DEV}.disks.1`, { name: 'hp', disk: { bus: 'virtio' } }]], [`${DEV}.disks[1].disk.bus NotSupported`]],
  ['a hotpluggable claim as a cdrom', ephemeralVmi, [['spec.volumes.1', { name: 'hp', persistentVolumeClaim: { claimName: 'c', hotpluggable: true } }], [`${DEV}.disks.1`, { name: 'hp', cdrom: { bus: 'scsi' } }]], [`${DEV}.disks[1] NotSupported`]],
  ['a hotpluggable claim as a boot disk', ephemeralVmi, [['spec.volumes.1', { name: 'hp', persistentVolumeClaim: { claimName: 'c', hotpluggable: true } }], [`${DEV}.disks.1`, { name: 'hp', bootOrder: 2 }]], [`${DEV}.disks[1].bootOrder Forbidden`]],
  ['hotpluggable not a boolean', ephemeralVmi, [['spec.volumes.1', { name: 'hp', persistentVolumeClaim: { claimName: 'c', hotpluggable: 'yes' } }]], ['spec.volumes[1].persistentVolumeClaim.hotpluggable TypeInvalid']],
  ['nic boot order reused', masqueradeVmi, [[`${DEV}.disks.0.bootOrder`, 1], [`${DEV}.interfaces.0.bootOrder`, 1]], [`${DEV}.interfaces[0].bootOrder Duplicate`]],
];

function errorsAfter(base: () => Json, changes: [string, unknown][]): string[] {
  const vmi = base();
  for (const [path, value] of changes) {
    // setPath takes dotted indices (`disks.0`); a bracket would create a stray key instead.
    assert.ok(!path.includes('['), `row path ${path} must use dotted indices`);
    setPath(vmi, path, value);
  }
  return validateVmi(vmi).map((error) => `${error.field} ${error.type}`);
}

describe('validateVmi', () => {
  it('accepts the example manifests', () => {
    assert.deepEqual(validateVmi(ephemeralVmi()), []);
    assert.deepEqual(validateVmi(fullVmi()), []);
    assert.deepEqual(validateVmi(masqueradeVmi()), []);
  });

  for (const [title, base, changes, expected] of ROWS) {
    it(title, () => {
      assert.deepEqual(errorsAfter(base, changes), expected);
    });
  }

  for (const raw of [null, undefined, [], 'vmi', 42, true]) {
    it(`refuses a top-level ${JSON.stringify(raw) ?? 'undefined'}`, () => {
      const errors = validateVmi(raw);
      assert.equal(errors.length, 1);
      assert.equal(errors[0]?.field, '');
      assert.equal(errors[0]?.type, 'TypeInvalid');
    });
  }

  it('says what is wrong and what is accepted', () => {
    const vmi = setPath(fullVmi(), 'spec.domain.devices.disks.0.disk.bus', 'ide');
    setPath(vmi, 'spec.domain.resources.requests.memory', '64Mi');
    setPath(vmi, 'spec.domain.memory.guest', undefined);
    setPath(vmi, 'spec.domain.resources.limits.memory', undefined);
    const text = formatFieldErrors(validateVmi(vmi));
    assert.equal(
      text,
      'spec.domain.resources.requests.memory: Invalid value: guest memory 64Mi is below 75497472 bytes (72Mi), the least a guest boots with here; ' +
        'spec.domain.devices.disks[0].disk.bus: Unsupported value: "ide" is not supported; accepted: virtio, sata, scsi, usb',
    );
  });

  it('takes the memory minimum as an option', () => {
    const vmi = setPath(ephemeralVmi(), 'spec.domain.resources.requests.memory', '64Mi');
    assert.deepEqual(validateVmi(vmi, { minGuestMemoryBytes: 32n * 1024n * 1024n }), []);
    assert.equal(validateVmi(ephemeralVmi(), { minGuestMemoryBytes: 256n * 1024n * 1024n }).length, 1);
  });

  it('does not modify its input', () => {
    const vmi = fullVmi();
    const before = JSON.stringify(vmi);
    validateVmi(vmi);
    assert.equal(JSON.stringify(vmi), before);
  });
});
