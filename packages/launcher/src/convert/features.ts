import type { DefaultedVmi } from '@podvirt/api';
import { el, type XmlElement } from './xml.js';

/** `<features>`: ACPI, APIC and SMM as the defaulted VMI enables them. */
export function convertFeatures(vmi: DefaultedVmi): XmlElement {
  const f = vmi.spec.domain.features;
  return el(
    'features',
    {},
    f.acpi.enabled && el('acpi'),
    f.apic?.enabled === true && el('apic', { eoi: f.apic.endOfInterrupt === undefined ? undefined : f.apic.endOfInterrupt ? 'on' : 'off' }),
    f.smm?.enabled === true && el('smm', { state: 'on' }),
  );
}

export function acpiEnabled(vmi: DefaultedVmi): boolean {
  return vmi.spec.domain.features.acpi.enabled;
}
