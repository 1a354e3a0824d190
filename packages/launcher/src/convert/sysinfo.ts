import { InvalidVmiError } from '../errors.js';
import type { Vmi } from '../vmi.js';
import { el, type XmlElement } from './xml.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** firmware.uuid / firmware.serial → SMBIOS system entries (the guest sees them in DMI). */
export function convertSysinfo(vmi: Vmi): XmlElement | undefined {
  const fw = vmi.spec?.domain?.firmware;
  if (fw?.uuid !== undefined && (typeof fw.uuid !== 'string' || !UUID.test(fw.uuid))) {
    throw new InvalidVmiError('spec.domain.firmware.uuid', `not a UUID: ${JSON.stringify(fw.uuid)}`);
  }
  if (fw?.serial !== undefined && typeof fw.serial !== 'string') {
    throw new InvalidVmiError('spec.domain.firmware.serial', 'must be a string');
  }
  const entries = [
    fw?.uuid !== undefined ? el('entry', { name: 'uuid' }, fw.uuid) : undefined,
    fw?.serial !== undefined ? el('entry', { name: 'serial' }, fw.serial) : undefined,
  ];
  if (entries.every((e) => e === undefined)) return undefined;
  return el('sysinfo', { type: 'smbios' }, el('system', {}, ...entries));
}
