import { toBytes, type DefaultedVmi } from '@podvirt/api';
import { el, type XmlElement } from './xml.js';

/** Guest memory in bytes; defaulting has copied the request (or limit) into memory.guest. */
export function guestMemoryBytes(vmi: DefaultedVmi): bigint {
  return toBytes(vmi.spec.domain.memory.guest);
}

/**
 * The field to name for the guest memory's size. Defaulting copies a request into memory.guest
 * and memory.guest into the request; they differ only when both were written, and then
 * memory.guest is what the guest gets.
 */
export function memoryField(vmi: DefaultedVmi): string {
  const { memory, resources } = vmi.spec.domain;
  const request = resources?.requests?.memory;
  return request !== undefined && String(request) === String(memory.guest) ? 'spec.domain.resources.requests.memory' : 'spec.domain.memory.guest';
}

export function convertMemory(vmi: DefaultedVmi): XmlElement {
  return el('memory', { unit: 'b' }, String(guestMemoryBytes(vmi)));
}
