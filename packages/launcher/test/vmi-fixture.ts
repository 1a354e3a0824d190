import { VmiInvalidError, type DefaultedVmi, type VirtualMachineInstance } from '@podvirt/api';
import type { ConverterContext } from '../src/convert/context.js';
import { decodeVmiRequest } from '../src/server/parse-vmi.js';

/** A minimal valid VMI as the handler sends it (undecoded JSON); tests override what they examine. */
export function rawVmi(spec: Record<string, unknown> = {}, domain: Record<string, unknown> = {}): VirtualMachineInstance {
  return {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachineInstance',
    metadata: { name: 'testvmi', namespace: 'mynamespace', uid: 'test-uid' },
    spec: { domain: { resources: { requests: { memory: '128Mi' } }, devices: {}, ...domain }, ...spec },
  } as VirtualMachineInstance;
}

/** What the Cmd server's Sync hands the converter: the request bytes through its one decode. */
export function syncDecode(raw: unknown): DefaultedVmi {
  return decodeVmiRequest(Buffer.from(JSON.stringify(raw)));
}

export function baseVmi(spec: Record<string, unknown> = {}, domain: Record<string, unknown> = {}): DefaultedVmi {
  return syncDecode(rawVmi(spec, domain));
}

export function context(overrides: Partial<ConverterContext> = {}): ConverterContext {
  return {
    domainType: 'qemu',
    privateDir: '/var/run/kubevirt-private',
    ephemeralDiskDir: '/var/run/kubevirt-ephemeral-disks',
    libvirtRunDir: '/var/run/libvirt',
    containerDisks: new Map([['cdisk', { path: '/var/run/kubevirt/container-disks/cdisk/disk.img', format: 'raw' }]]),
    kernelBoot: { kernel: '/var/run/kubevirt/container-disks/kernel-boot/boot/vmlinuz', initrd: '/var/run/kubevirt/container-disks/kernel-boot/boot/initrd.img' },
    persistentDisks: new Map([['h', { path: '/proc/42/fd/7', block: false, io: { directIo: true, preallocated: false } }]]),
    emulator: '/usr/bin/qemu-system-x86_64',
    // The pod interface defaulting adds to a VMI that names none, as the network set-up wires it.
    interfaces: new Map([['default', { ifaceName: 'default', binding: 'bridge', tap: 'tap0', mac: '0a:58:0a:c8:00:05', mtu: 1500, guestIP: '10.200.0.5', reportedIPs: ['10.200.0.5'], podInterfaceName: 'eth0' }]]),
    ...overrides,
  };
}

/** An invalid VMI refused at `field`, wherever on the Sync path it was found. */
export function invalidAt(field: string): (e: unknown) => boolean {
  return (e) => e instanceof VmiInvalidError && e.fieldErrors.some((f) => f.field === field);
}
