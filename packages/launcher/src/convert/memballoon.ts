import type { DefaultedVmi } from '@podvirt/api';
import { el, type XmlElement } from './xml.js';

/** A virtio balloon with a 10 s stats period unless autoattachMemBalloon is false (then model none). */
export function convertMemballoon(vmi: DefaultedVmi): XmlElement {
  if (!vmi.spec.domain.devices.autoattachMemBalloon) return el('memballoon', { model: 'none' });
  return el('memballoon', { model: 'virtio-non-transitional' }, el('stats', { period: 10 }));
}
