import type { DefaultedVmi } from '@podvirt/api';
import { el, type XmlElement } from './xml.js';

/** firmware.uuid / firmware.serial → SMBIOS system entries (the guest sees them in DMI). */
export function convertSysinfo(vmi: DefaultedVmi): XmlElement | undefined {
  const fw = vmi.spec.domain.firmware;
  const entries = [
    fw?.uuid ? el('entry', { name: 'uuid' }, fw.uuid) : undefined,
    fw?.serial !== undefined ? el('entry', { name: 'serial' }, fw.serial) : undefined,
  ];
  if (entries.every((e) => e === undefined)) return undefined;
  return el('sysinfo', { type: 'smbios' }, el('system', {}, ...entries));
}
