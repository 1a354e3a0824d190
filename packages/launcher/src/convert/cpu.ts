import { InvalidVmiError } from '../errors.js';
import type { Vmi } from '../vmi.js';
import type { DomainType } from './hypervisor.js';
import { el, type XmlElement } from './xml.js';

function count(value: unknown, field: string): number {
  if (value === undefined) return 1;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
    throw new InvalidVmiError(field, `must be a positive integer, got ${JSON.stringify(value)}`);
  }
  return value;
}

/**
 * `<vcpu>` and `<cpu>`: topology sockets × cores × threads. Without a model KubeVirt asks for
 * host-model; under emulation that model is derived from a host CPU TCG does not implement
 * (and measured slower), so podvirt uses qemu64 there instead.
 */
export function convertCpu(vmi: Vmi, domainType: DomainType): { vcpu: XmlElement; cpu: XmlElement } {
  const spec = vmi.spec?.domain?.cpu ?? {};
  const sockets = count(spec.sockets, 'spec.domain.cpu.sockets');
  const cores = count(spec.cores, 'spec.domain.cpu.cores');
  const threads = count(spec.threads, 'spec.domain.cpu.threads');
  const topology = el('topology', { sockets, cores, threads });
  const vcpu = el('vcpu', { placement: 'static' }, String(sockets * cores * threads));
  const model = spec.model;
  if (model !== undefined && (typeof model !== 'string' || model === '')) {
    throw new InvalidVmiError('spec.domain.cpu.model', 'must be a non-empty string');
  }
  if (model === 'host-model' || model === 'host-passthrough') {
    return { vcpu, cpu: el('cpu', { mode: model }, topology) };
  }
  if (model === undefined && domainType === 'kvm') return { vcpu, cpu: el('cpu', { mode: 'host-model' }, topology) };
  const name = model ?? 'qemu64';
  return {
    vcpu,
    cpu: el('cpu', { mode: 'custom', match: 'exact', check: 'none' }, el('model', { fallback: 'forbid' }, name), topology),
  };
}
