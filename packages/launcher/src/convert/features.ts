import type { Vmi } from '../vmi.js';
import { el, type XmlElement } from './xml.js';

/** `<features>`: ACPI unless explicitly disabled (KubeVirt's default), APIC and SMM when asked. */
export function convertFeatures(vmi: Vmi): XmlElement {
  const f = vmi.spec?.domain?.features;
  return el(
    'features',
    {},
    f?.acpi?.enabled !== false && el('acpi'),
    f?.apic !== undefined && f.apic.enabled !== false && el('apic', { eoi: f.apic.endOfInterrupt === undefined ? undefined : f.apic.endOfInterrupt ? 'on' : 'off' }),
    f?.smm !== undefined && f.smm.enabled !== false && el('smm', { state: 'on' }),
  );
}

export function acpiEnabled(vmi: Vmi): boolean {
  return vmi.spec?.domain?.features?.acpi?.enabled !== false;
}
