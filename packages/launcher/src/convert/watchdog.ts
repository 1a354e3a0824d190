import type { DefaultedVmi } from '@podvirt/api';
import { el, type XmlElement } from './xml.js';

/** An i6300esb watchdog with the defaulted action. */
export function convertWatchdog(vmi: DefaultedVmi): XmlElement[] {
  const wd = vmi.spec.domain.devices.watchdog;
  if (wd === undefined) return [];
  return [el('watchdog', { model: 'i6300esb', action: wd.i6300esb.action }, el('alias', { name: `ua-${wd.name}` }))];
}
