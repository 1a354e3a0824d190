import type { GuestImage } from './guest-image.js';

export interface GuestDomainXmlOptions {
  readonly name: string;
  readonly uuid?: string;
  /** Guest RAM; 64 MiB does not boot the cloud kernel (72 MiB is the floor), hence 128. */
  readonly memoryMiB?: number;
  readonly vcpus?: number;
  readonly image: GuestImage;
  /** Extra kernel arguments after `image.kernelArgs`, e.g. `image.acpiIgnoreArg`. */
  readonly extraKernelArgs?: readonly string[];
  /** The VM's own copy of `image.dataDisk` (the guest writes to it); omitted: no disk. */
  readonly dataDisk?: string;
  /** The serial console's unix socket (qemu listens on it). */
  readonly serialSocket: string;
  /** Everything the console prints, written by qemu whether or not a client is connected. */
  readonly serialLog: string;
  /** The agent channel's unix socket; omitted: libvirt picks a path under its state dir. */
  readonly agentSocket?: string;
}

const XML_ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  "'": '&apos;',
  '"': '&quot;',
};

function esc(value: string | number): string {
  return String(value).replace(/[&<>'"]/g, (c) => XML_ESCAPES[c] ?? c);
}

/**
 * Libvirt domain XML for the test guest: TCG (`type='qemu'`, KVM does not work on this
 * substrate), q35, qemu64, direct kernel boot. A test fixture only — the product's VMI →
 * domain converter lives in the launcher.
 */
export function guestDomainXml(opts: GuestDomainXmlOptions): string {
  const cmdline = [opts.image.kernelArgs, ...(opts.extraKernelArgs ?? [])].join(' ');
  const agentSource =
    opts.agentSocket === undefined ? `<source mode='bind'/>` : `<source mode='bind' path='${esc(opts.agentSocket)}'/>`;
  const disk =
    opts.dataDisk === undefined
      ? ''
      : `    <disk type='file' device='disk'>
      <driver name='qemu' type='raw' cache='none' io='native'/>
      <source file='${esc(opts.dataDisk)}'/>
      <target dev='vda' bus='virtio'/>
    </disk>
`;
  return `<domain type='qemu'>
  <name>${esc(opts.name)}</name>
${opts.uuid === undefined ? '' : `  <uuid>${esc(opts.uuid)}</uuid>\n`}  <memory unit='MiB'>${esc(opts.memoryMiB ?? 128)}</memory>
  <vcpu placement='static'>${esc(opts.vcpus ?? 1)}</vcpu>
  <os>
    <type arch='x86_64' machine='q35'>hvm</type>
    <kernel>${esc(opts.image.kernel)}</kernel>
    <initrd>${esc(opts.image.initrd)}</initrd>
    <cmdline>${esc(cmdline)}</cmdline>
  </os>
  <features><acpi/></features>
  <cpu mode='custom' match='exact' check='none'><model fallback='forbid'>qemu64</model></cpu>
  <clock offset='utc'/>
  <on_poweroff>destroy</on_poweroff>
  <on_reboot>restart</on_reboot>
  <on_crash>destroy</on_crash>
  <devices>
    <emulator>/usr/bin/qemu-system-x86_64</emulator>
${disk}    <serial type='unix'>
      <source mode='bind' path='${esc(opts.serialSocket)}'/>
      <log file='${esc(opts.serialLog)}' append='on'/>
      <target port='0'/>
    </serial>
    <channel type='unix'>
      ${agentSource}
      <target type='virtio' name='org.qemu.guest_agent.0'/>
    </channel>
    <controller type='usb' model='none'/>
    <input type='keyboard' bus='ps2'/>
    <memballoon model='none'/>
  </devices>
</domain>
`;
}
