import { InvalidVmiError } from '../errors.js';
import type { Vmi } from '../vmi.js';
import { quantityToBytes } from './quantity.js';
import { el, type XmlElement } from './xml.js';

/** Guest memory in bytes, by KubeVirt's precedence: memory.guest, then requests, then limits. */
export function guestMemoryBytes(vmi: Vmi): bigint {
  const domain = vmi.spec?.domain;
  const candidates: [unknown, string][] = [
    [domain?.memory?.guest, 'spec.domain.memory.guest'],
    [domain?.resources?.requests?.['memory'], 'spec.domain.resources.requests.memory'],
    [domain?.resources?.limits?.['memory'], 'spec.domain.resources.limits.memory'],
  ];
  for (const [value, field] of candidates) {
    if (value === undefined) continue;
    const bytes = quantityToBytes(value, field);
    if (bytes <= 0n) throw new InvalidVmiError(field, 'memory must be positive');
    return bytes;
  }
  throw new InvalidVmiError('spec.domain.memory.guest', 'no memory given (set memory.guest or resources.requests.memory)');
}

/** The field the guest memory was taken from, for errors about its size. */
export function memoryField(vmi: Vmi): string {
  const domain = vmi.spec?.domain;
  if (domain?.memory?.guest !== undefined) return 'spec.domain.memory.guest';
  if (domain?.resources?.requests?.['memory'] !== undefined) return 'spec.domain.resources.requests.memory';
  return 'spec.domain.resources.limits.memory';
}

export function convertMemory(vmi: Vmi): XmlElement {
  return el('memory', { unit: 'b' }, String(guestMemoryBytes(vmi)));
}
