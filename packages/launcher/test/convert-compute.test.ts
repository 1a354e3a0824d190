// Table tests of the compute families: name, memory, CPU, SMBIOS, os/kernelBoot, clock,
// features, the hypervisor decision and the fixed devices. Every case takes the Sync call's
// path: request bytes → the Cmd server's decode → convertVmi.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { convertVmi } from '../src/convert/convert-vmi.js';
import { decideDomainType } from '../src/convert/hypervisor.js';
import { findAll, findElement, renderXml, textOf } from '../src/convert/xml.js';
import { deriveFirmwareUuid } from '@podvirt/api';
import { LauncherError } from '../src/errors.js';
import { context, invalidAt, rawVmi, syncDecode } from './vmi-fixture.js';

function convert(spec: Record<string, unknown> = {}, domain: Record<string, unknown> = {}, ctx = context()) {
  return convertVmi(syncDecode(rawVmi(spec, domain)), ctx).domain;
}

function rejects(field: string, spec: Record<string, unknown>, domain: Record<string, unknown> = {}, ctx = context()): void {
  assert.throws(() => convertVmi(syncDecode(rawVmi(spec, domain)), ctx), invalidAt(field));
}

test('domain name is <namespace>_<name>, type follows the context, uid in metadata', () => {
  const d = convert();
  assert.equal(textOf(findElement(d, 'domain/name')), 'mynamespace_testvmi');
  assert.equal(d.attrs['type'], 'qemu');
  assert.equal(textOf(findElement(d, 'metadata/kubevirt/uid')), 'test-uid');
  assert.equal(convert({}, {}, context({ domainType: 'kvm' })).attrs['type'], 'kvm');
});

describe('memory: guest > requests > limits', () => {
  const cases: [string, Record<string, unknown>, string][] = [
    ['request 96Mi', { resources: { requests: { memory: '96Mi' } } }, '100663296'],
    ['request 3G (decimal)', { resources: { requests: { memory: '3G' } } }, '3000000000'],
    ['request 1.5Gi', { resources: { requests: { memory: '1.5Gi' } } }, '1610612736'],
    ['guest beats request', { memory: { guest: '96Mi' }, resources: { requests: { memory: '128Mi' } } }, '100663296'],
    ['request beats limit', { resources: { requests: { memory: '96Mi' }, limits: { memory: '256Mi' } } }, '100663296'],
    ['limit alone', { resources: { limits: { memory: '256Mi' } } }, '268435456'],
    ['98304Ki', { resources: { requests: { memory: '98304Ki' } } }, '100663296'],
  ];
  for (const [name, domain, bytes] of cases) {
    test(name, () => {
      const m = findElement(convert({}, domain), 'domain/memory');
      assert.equal(m?.attrs['unit'], 'b');
      assert.equal(textOf(m), bytes);
    });
  }
  test('malformed and missing memory name the field', () => {
    rejects('spec.domain.memory.guest', {}, { memory: { guest: '-1Mi' }, resources: {} });
    rejects('spec.domain.resources.requests.memory', {}, { resources: { requests: { memory: 'lots' } } });
    rejects('spec.domain.resources.requests.memory', {}, { resources: {} });
    rejects('spec.domain.resources.requests.memory', {}, { resources: { requests: { memory: '8Mi' } } });
    rejects('spec.domain.memory.guest', {}, { memory: { guest: '0' } });
  });
});

describe('cpu', () => {
  test('topology and custom model', () => {
    const d = convert({}, { cpu: { cores: 3, sockets: 2, threads: 2, model: 'Conroe' } });
    assert.deepEqual(findElement(d, 'cpu/topology')?.attrs, { sockets: 2, cores: 3, threads: 2 });
    assert.equal(findElement(d, 'cpu')?.attrs['mode'], 'custom');
    assert.equal(textOf(findElement(d, 'cpu/model')), 'Conroe');
    assert.equal(textOf(findElement(d, 'domain/vcpu')), '12');
  });
  test('no model: host-model with KVM, qemu64 under emulation', () => {
    assert.equal(findElement(convert({}, {}, context({ domainType: 'kvm' })), 'cpu')?.attrs['mode'], 'host-model');
    const tcg = convert();
    assert.equal(findElement(tcg, 'cpu')?.attrs['mode'], 'custom');
    assert.equal(textOf(findElement(tcg, 'cpu/model')), 'qemu64');
    assert.equal(textOf(findElement(tcg, 'domain/vcpu')), '1');
  });
  test('host-passthrough is passed through', () => {
    assert.equal(findElement(convert({}, { cpu: { model: 'host-passthrough' } }), 'cpu')?.attrs['mode'], 'host-passthrough');
  });
  test('bad counts are refused', () => {
    rejects('spec.domain.cpu.cores', {}, { cpu: { cores: 0 } });
    rejects('spec.domain.cpu.sockets', {}, { cpu: { sockets: 1.5 } });
    rejects('spec.domain.cpu.threads', {}, { cpu: { threads: '2' } });
  });
});

describe('firmware', () => {
  test('uuid and serial become SMBIOS system entries', () => {
    const d = convert({}, { firmware: { uuid: '5d307ca9-b3ef-428c-8861-06e72d69f223', serial: 'e4686d2c-6e8d-4335-b8fd-81bee22f4814' } });
    const entries = findAll(d, 'sysinfo/system/entry').map((e) => [e.attrs['name'], textOf(e)]);
    assert.deepEqual(entries, [['uuid', '5d307ca9-b3ef-428c-8861-06e72d69f223'], ['serial', 'e4686d2c-6e8d-4335-b8fd-81bee22f4814']]);
    assert.equal(findElement(d, 'os/smbios')?.attrs['mode'], 'sysinfo');
  });
  test('without them the UUID is the one defaulting derives from the name', () => {
    const d = convert();
    const entries = findAll(d, 'sysinfo/system/entry').map((e) => [e.attrs['name'], textOf(e)]);
    assert.deepEqual(entries, [['uuid', deriveFirmwareUuid('testvmi')]]);
    assert.equal(findElement(d, 'os/smbios')?.attrs['mode'], 'sysinfo');
  });
  test('a malformed uuid is refused', () => rejects('spec.domain.firmware.uuid', {}, { firmware: { uuid: 'nope' } }));
  test('kernelBoot: kernel, initrd, cmdline from the image', () => {
    const d = convert({}, {
      firmware: { kernelBoot: { kernelArgs: 'console=ttyS0', container: { image: 'guest:1', kernelPath: '/boot/vmlinuz', initrdPath: '/boot/initrd.img' } } },
    });
    assert.equal(textOf(findElement(d, 'os/kernel')), '/var/run/kubevirt/container-disks/kernel-boot/boot/vmlinuz');
    assert.equal(textOf(findElement(d, 'os/initrd')), '/var/run/kubevirt/container-disks/kernel-boot/boot/initrd.img');
    assert.equal(textOf(findElement(d, 'os/cmdline')), 'console=ttyS0');
  });
  test('kernelBoot errors name the field', () => {
    rejects('spec.domain.firmware.kernelBoot.container.image', {}, { firmware: { kernelBoot: { container: { kernelPath: '/k' } } } });
    rejects('spec.domain.firmware.kernelBoot.container', {}, { firmware: { kernelBoot: { container: { image: 'i' } } } });
    rejects('spec.domain.firmware.kernelBoot.kernelArgs', {}, { firmware: { kernelBoot: { kernelArgs: 'x', container: { image: 'i', initrdPath: '/i' } } } });
    rejects('spec.domain.firmware.kernelBoot.container.kernelPath', {}, { firmware: { kernelBoot: { container: { image: 'i', kernelPath: '/k' } } } }, context({ kernelBoot: {} }));
  });
});

test('machine type defaults to q35 and can be chosen', () => {
  assert.equal(findElement(convert(), 'os/type')?.attrs['machine'], 'q35');
  assert.equal(findElement(convert({}, { machine: { type: 'pc-q35-7.2' } }), 'os/type')?.attrs['machine'], 'pc-q35-7.2');
  rejects('spec.domain.machine.type', {}, { machine: { type: 'pc' } });
});

describe('clock and features', () => {
  test('utc by default, offset and timers', () => {
    assert.deepEqual(findElement(convert(), 'domain/clock')?.attrs, { offset: 'utc', adjustment: undefined });
    const d = convert({}, { clock: { utc: { offsetSeconds: 60 }, timer: { rtc: { tickPolicy: 'catchup', track: 'guest' }, pit: { present: false }, hpet: { present: false } } } });
    assert.equal(findElement(d, 'domain/clock')?.attrs['adjustment'], '60');
    const timers = findAll(d, 'clock/timer').map((t) => `${t.attrs['name']}:${t.attrs['present'] ?? ''}:${t.attrs['tickpolicy'] ?? ''}`);
    assert.deepEqual(timers, ['rtc:yes:catchup', 'pit:no:', 'hpet:no:'], 'a listed timer is present unless switched off');
  });
  test('timezone; both utc and timezone refused; unknown timer refused', () => {
    assert.deepEqual(findElement(convert({}, { clock: { timezone: 'Europe/Berlin' } }), 'domain/clock')?.attrs, { offset: 'timezone', timezone: 'Europe/Berlin' });
    rejects('spec.domain.clock', {}, { clock: { utc: {}, timezone: 'UTC' } });
    rejects('spec.domain.clock.timer.tsc', {}, { clock: { timer: { tsc: {} } } });
  });
  test('acpi on unless disabled; apic and smm when asked', () => {
    const names = (d: ReturnType<typeof convert>) => findElement(d, 'domain/features')?.children.map((c) => (typeof c === 'string' ? c : c.name));
    assert.deepEqual(names(convert()), ['acpi']);
    assert.deepEqual(names(convert({}, { features: { acpi: { enabled: false }, apic: {}, smm: {} } })), ['apic', 'smm']);
  });
});

describe('domain type decision', () => {
  test('kvm when usable, qemu when emulation is allowed, else an error', () => {
    assert.equal(decideDomainType(true, false), 'kvm');
    assert.equal(decideDomainType(false, true), 'qemu');
    assert.throws(() => decideDomainType(false, false), (e: unknown) => e instanceof LauncherError && e.code === 'LAUNCHER_ERR_NO_HYPERVISOR');
  });
});

test('identity fields are required', () => {
  const vmi = rawVmi();
  delete vmi.metadata.uid;
  assert.throws(() => convertVmi(syncDecode(vmi), context()), invalidAt('metadata.uid'));
});

test('the rendered XML escapes text and attributes', () => {
  const d = convert({}, { firmware: { serial: `a<b>&"c'` } });
  assert.match(renderXml(d), /<entry name="serial">a&lt;b&gt;&amp;&quot;c&apos;<\/entry>/);
});
