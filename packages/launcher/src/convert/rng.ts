import type { DefaultedVmi } from '@podvirt/api';
import { el, type XmlElement } from './xml.js';

/** `devices.rng: {}` → a virtio RNG fed from the host's /dev/urandom. */
export function convertRng(vmi: DefaultedVmi): XmlElement[] {
  if (vmi.spec.domain.devices.rng === undefined) return [];
  return [el('rng', { model: 'virtio-non-transitional' }, el('backend', { model: 'random' }, '/dev/urandom'))];
}
