// A VMI against what this node can give, before anything is defined: the machine type and CPU
// model must be ones the emulator offers, host-passthrough needs a host CPU to pass through
// (KVM), the vCPUs must fit the machine type and the memory the node. A missing one is the
// node's lack (FAILED_PRECONDITION), named by the field that asks for it.

import type { DefaultedVmi } from '@podvirt/api';
import { NodeLacksError } from '../errors.js';
import type { NodeFacts } from '../host/node-facts.js';
import type { DomainType } from './hypervisor.js';
import { guestMemoryBytes, memoryField } from './memory.js';

// libvirt refuses more than 255 vCPUs on x86 unless an IOMMU with extended interrupt mode is
// defined, which the converter does not add: the real limit is the lower of the two.
const X86_WITHOUT_EIM_MAX_VCPUS = 255;
const HOST_MODES = ['host-model', 'host-passthrough'];

function some(names: Iterable<string>, max = 8): string {
  const list = [...names].sort();
  return list.length > max ? `${list.slice(0, max).join(', ')} … (${list.length} in all)` : list.join(', ');
}

function checkMachine(vmi: DefaultedVmi, facts: NodeFacts): number {
  // Facts that came back empty prove nothing; libvirt still has the last word.
  if (facts.machines.size === 0) return Number.MAX_SAFE_INTEGER;
  const type = vmi.spec.domain.machine.type;
  const max = facts.machines.get(type);
  if (max === undefined) {
    const q35 = [...facts.machines.keys()].filter((name) => name.includes('q35'));
    throw new NodeLacksError('spec.domain.machine.type', `this node's emulator has no machine type ${JSON.stringify(type)}; it offers ${some(q35)}`);
  }
  return max;
}

function checkCpu(vmi: DefaultedVmi, facts: NodeFacts, domainType: DomainType, maxVcpus: number): void {
  const cpu = vmi.spec.domain.cpu;
  const model = cpu.model;
  if (model !== undefined && model !== '') {
    if (HOST_MODES.includes(model)) {
      if (!facts.cpuModes.has(model)) {
        const why = domainType === 'qemu' ? 'under emulation (no KVM) there is no host CPU to pass through' : 'libvirt does not offer it here';
        throw new NodeLacksError('spec.domain.cpu.model', `${model} is not available on this node: ${why}; use a named model such as qemu64`);
      }
    } else if (facts.cpuModels.size > 0 && !facts.cpuModels.has(model)) {
      throw new NodeLacksError('spec.domain.cpu.model', `this node's emulator has no CPU model ${JSON.stringify(model)}; it offers ${some(facts.cpuModels)}`);
    }
  }
  const vcpus = cpu.sockets * cpu.cores * cpu.threads;
  if (vcpus > maxVcpus) {
    throw new NodeLacksError('spec.domain.cpu', `${vcpus} vCPUs (sockets × cores × threads) exceed the ${maxVcpus} this node's machine type takes`);
  }
}

function checkMemory(vmi: DefaultedVmi, facts: NodeFacts): void {
  const bytes = guestMemoryBytes(vmi);
  if (bytes <= facts.memoryBytes) return;
  const gib = (n: bigint): string => `${(Number(n) / 2 ** 30).toFixed(1)} GiB`;
  throw new NodeLacksError(memoryField(vmi), `guest memory ${gib(bytes)} is more than this node has (${gib(facts.memoryBytes)})`);
}

export function checkAgainstNode(vmi: DefaultedVmi, facts: NodeFacts, domainType: DomainType): void {
  const maxVcpus = checkMachine(vmi, facts);
  checkCpu(vmi, facts, domainType, Math.min(maxVcpus, X86_WITHOUT_EIM_MAX_VCPUS));
  checkMemory(vmi, facts);
}
