import type { Vmi } from '../vmi.js';
import { el, type XmlElement } from './xml.js';

/** `devices.rng: {}` → a virtio RNG fed from the host's /dev/urandom. */
export function convertRng(vmi: Vmi): XmlElement[] {
  if (vmi.spec?.domain?.devices?.rng === undefined) return [];
  return [el('rng', { model: 'virtio-non-transitional' }, el('backend', { model: 'random' }, '/dev/urandom'))];
}
