import assert from 'node:assert/strict';
import { test } from 'node:test';
import { guestDomainXml } from './guest-domain-xml.js';
import type { GuestImage } from './guest-image.js';

const image: GuestImage = {
  dir: '/img',
  kernel: '/img/vmlinuz',
  initrd: '/img/initrd.img',
  dataDisk: '/img/data.ext4',
  readyMarker: 'PODVIRT-GUEST-READY',
  heartbeatMarker: 'PODVIRT-GUEST-HEARTBEAT',
  acpiPowerButtonMarker: 'PODVIRT-GUEST-ACPI-POWERBUTTON',
  acpiIgnoredMarker: 'PODVIRT-GUEST-ACPI-IGNORED',
  agentShutdownMarker: 'PODVIRT-GUEST-AGENT-SHUTDOWN',
  kernelArgs: 'console=ttyS0 quiet',
  acpiIgnoreArg: 'podvirt.acpi=ignore',
  noAgentArg: 'podvirt.agent=off',
};

const base = { name: 'vm', image, serialSocket: '/vm/serial0', serialLog: '/vm/serial0.log' };

void test('a TCG q35 guest with the defaults', () => {
  const xml = guestDomainXml(base);
  assert.match(xml, /^<domain type='qemu'>/);
  assert.match(xml, /<memory unit='MiB'>128<\/memory>/);
  assert.match(xml, /<vcpu placement='static'>1<\/vcpu>/);
  assert.match(xml, /machine='q35'/);
  assert.match(xml, /<model fallback='forbid'>qemu64<\/model>/);
  assert.match(xml, /<kernel>\/img\/vmlinuz<\/kernel>\s*<initrd>\/img\/initrd.img<\/initrd>\s*<cmdline>console=ttyS0 quiet<\/cmdline>/);
  assert.match(xml, /<source mode='bind' path='\/vm\/serial0'\/>\s*<log file='\/vm\/serial0.log' append='on'\/>/);
  assert.match(xml, /<channel type='unix'>\s*<source mode='bind'\/>\s*<target type='virtio' name='org.qemu.guest_agent.0'\/>/);
  assert.match(xml, /<memballoon model='none'\/>/);
  assert.doesNotMatch(xml, /<uuid>|<disk/);
});

void test('options: uuid, memory, disk copy, agent socket, extra kernel arguments', () => {
  const xml = guestDomainXml({
    ...base,
    uuid: '6f0c2bd2-2a57-4c5f-9f38-3d1f2f0a9d11',
    memoryMiB: 96,
    vcpus: 2,
    dataDisk: '/vm/data.ext4',
    agentSocket: '/vm/qga.sock',
    extraKernelArgs: [image.acpiIgnoreArg, image.noAgentArg],
  });
  assert.match(xml, /<uuid>6f0c2bd2-2a57-4c5f-9f38-3d1f2f0a9d11<\/uuid>/);
  assert.match(xml, /<memory unit='MiB'>96<\/memory>/);
  assert.match(xml, /<vcpu placement='static'>2<\/vcpu>/);
  assert.match(xml, /<source file='\/vm\/data.ext4'\/>\s*<target dev='vda' bus='virtio'\/>/);
  assert.match(xml, /<source mode='bind' path='\/vm\/qga.sock'\/>/);
  assert.match(xml, /<cmdline>console=ttyS0 quiet podvirt.acpi=ignore podvirt.agent=off<\/cmdline>/);
});

void test('values are XML-escaped', () => {
  const xml = guestDomainXml({ ...base, name: `a<b>&'"`, serialLog: "/v m/it's.log" });
  assert.match(xml, /<name>a&lt;b&gt;&amp;&apos;&quot;<\/name>/);
  assert.match(xml, /<log file='\/v m\/it&apos;s.log'/);
});
