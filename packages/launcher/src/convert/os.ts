import { VmiInvalidError, type DefaultedVmi } from '@podvirt/api';
import type { ConverterContext } from './context.js';
import { el, type XmlElement } from './xml.js';

/**
 * `<os>`: machine type, SMBIOS from sysinfo when present, and direct kernel boot from the
 * kernelBoot container's files.
 */
export function convertOs(vmi: DefaultedVmi, ctx: ConverterContext, withSysinfo: boolean): XmlElement {
  return el(
    'os',
    {},
    el('type', { arch: 'x86_64', machine: vmi.spec.domain.machine.type }, 'hvm'),
    ...kernelBoot(vmi, ctx),
    withSysinfo && el('smbios', { mode: 'sysinfo' }),
  );
}

/** What the VMI asks for is valid; whether the image holds the files only the launcher can see. */
function kernelBoot(vmi: DefaultedVmi, ctx: ConverterContext): XmlElement[] {
  const kb = vmi.spec.domain.firmware?.kernelBoot;
  const container = kb?.container;
  if (kb === undefined || container === undefined) return [];
  const base = 'spec.domain.firmware.kernelBoot.container';
  const out: XmlElement[] = [];
  if (container.kernelPath) {
    if (ctx.kernelBoot?.kernel === undefined) throw VmiInvalidError.at(`${base}.kernelPath`, 'NotFound', 'kernel file not found in the image');
    out.push(el('kernel', {}, ctx.kernelBoot.kernel));
  }
  if (container.initrdPath) {
    if (ctx.kernelBoot?.initrd === undefined) throw VmiInvalidError.at(`${base}.initrdPath`, 'NotFound', 'initrd file not found in the image');
    out.push(el('initrd', {}, ctx.kernelBoot.initrd));
  }
  if (kb.kernelArgs) out.push(el('cmdline', {}, kb.kernelArgs));
  return out;
}
