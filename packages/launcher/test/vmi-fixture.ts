import type { ConverterContext } from '../src/convert/context.js';
import type { Vmi } from '../src/vmi.js';

/** A minimal valid VMI; tests override what they examine. */
export function baseVmi(spec: Record<string, unknown> = {}, domain: Record<string, unknown> = {}): Vmi {
  return {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachineInstance',
    metadata: { name: 'testvmi', namespace: 'mynamespace', uid: 'test-uid' },
    spec: { domain: { resources: { requests: { memory: '128Mi' } }, devices: {}, ...domain }, ...spec },
  } as Vmi;
}

export function context(overrides: Partial<ConverterContext> = {}): ConverterContext {
  return {
    domainType: 'qemu',
    privateDir: '/var/run/kubevirt-private',
    ephemeralDiskDir: '/var/run/kubevirt-ephemeral-disks',
    libvirtRunDir: '/var/run/libvirt',
    containerDisks: new Map([['cdisk', { path: '/var/run/kubevirt/container-disks/cdisk/disk.img', format: 'raw' }]]),
    kernelBoot: { kernel: '/var/run/kubevirt/container-disks/kernel-boot/boot/vmlinuz', initrd: '/var/run/kubevirt/container-disks/kernel-boot/boot/initrd.img' },
    hostDiskPrefixes: ['/var/lib/podvirt/host-disks'],
    hostDisks: new Map([['h', '/proc/42/fd/7']]),
    emulator: '/usr/bin/qemu-system-x86_64',
    ...overrides,
  };
}
