import type { DefaultedVmi } from '@podvirt/api';
import type { DomainType } from './hypervisor.js';
import { el, type XmlElement } from './xml.js';

/**
 * `<vcpu>` and `<cpu>`: topology sockets × cores × threads. Without a model KubeVirt asks for
 * host-model; under emulation that model is derived from a host CPU TCG does not implement
 * (and measured slower), so podvirt uses qemu64 there instead.
 */
export function convertCpu(vmi: DefaultedVmi, domainType: DomainType): { vcpu: XmlElement; cpu: XmlElement } {
  const { sockets, cores, threads, model } = vmi.spec.domain.cpu;
  const topology = el('topology', { sockets, cores, threads });
  const vcpu = el('vcpu', { placement: 'static' }, String(sockets * cores * threads));
  if (model === 'host-model' || model === 'host-passthrough') {
    return { vcpu, cpu: el('cpu', { mode: model }, topology) };
  }
  // An empty model is Go's unset string.
  const named = model === '' ? undefined : model;
  if (named === undefined && domainType === 'kvm') return { vcpu, cpu: el('cpu', { mode: 'host-model' }, topology) };
  return {
    vcpu,
    cpu: el('cpu', { mode: 'custom', match: 'exact', check: 'none' }, el('model', { fallback: 'forbid' }, named ?? 'qemu64'), topology),
  };
}
