import { InvalidVmiError } from '../errors.js';
import type { Vmi } from '../vmi.js';
import type { ConverterContext } from './context.js';
import { el, type XmlElement } from './xml.js';

export const DEFAULT_MACHINE = 'q35';

/**
 * `<os>`: machine type (q35 unless the VMI names one), SMBIOS from sysinfo when present, and
 * direct kernel boot from the kernelBoot container's files.
 */
export function convertOs(vmi: Vmi, ctx: ConverterContext, withSysinfo: boolean): XmlElement {
  const machine = vmi.spec?.domain?.machine?.type ?? DEFAULT_MACHINE;
  if (typeof machine !== 'string' || machine === '') throw new InvalidVmiError('spec.domain.machine.type', 'must be a non-empty string');
  return el(
    'os',
    {},
    el('type', { arch: 'x86_64', machine }, 'hvm'),
    ...kernelBoot(vmi, ctx),
    withSysinfo && el('smbios', { mode: 'sysinfo' }),
  );
}

function kernelBoot(vmi: Vmi, ctx: ConverterContext): XmlElement[] {
  const kb = vmi.spec?.domain?.firmware?.kernelBoot;
  if (kb === undefined) return [];
  const base = 'spec.domain.firmware.kernelBoot';
  const container = kb.container;
  if (container === undefined || typeof container.image !== 'string' || container.image === '') {
    throw new InvalidVmiError(`${base}.container.image`, 'kernel boot needs a container image');
  }
  if (container.kernelPath === undefined && container.initrdPath === undefined) {
    throw new InvalidVmiError(`${base}.container`, 'set kernelPath, initrdPath or both');
  }
  if (kb.kernelArgs !== undefined && container.kernelPath === undefined) {
    throw new InvalidVmiError(`${base}.kernelArgs`, 'kernel arguments need container.kernelPath');
  }
  const out: XmlElement[] = [];
  if (container.kernelPath !== undefined) {
    if (ctx.kernelBoot?.kernel === undefined) throw new InvalidVmiError(`${base}.container.kernelPath`, 'kernel file not found in the image');
    out.push(el('kernel', {}, ctx.kernelBoot.kernel));
  }
  if (container.initrdPath !== undefined) {
    if (ctx.kernelBoot?.initrd === undefined) throw new InvalidVmiError(`${base}.container.initrdPath`, 'initrd file not found in the image');
    out.push(el('initrd', {}, ctx.kernelBoot.initrd));
  }
  if (kb.kernelArgs !== undefined) out.push(el('cmdline', {}, String(kb.kernelArgs)));
  return out;
}
