// What this node's emulator can give a domain, read from the launcher's own libvirt daemon for
// the machine type a VMI asks for: that machine type's vCPU limit, the CPU models and modes for
// the domain type (all from the domain capabilities of that machine), and the node's memory.
// The converter's caller checks a VMI against them before anything is defined (node-check.ts).
//
// The host capabilities (every machine type of every emulator) are read only to name the
// alternatives when a machine type is missing: libvirt builds them by probing every
// qemu-system-* binary on the node, which takes a second or more for each one not in its cache,
// and would sit on every VMI's start.

import { totalmem } from 'node:os';
import { LibvirtError } from '@podvirt/libvirt';

export interface NodeFacts {
  /**
   * Machine type name → the most vCPUs it takes: the one asked for, by its own name and
   * libvirt's canonical one (`q35`, `pc-q35-7.2`); when the emulator lacks it, the ones it
   * offers instead (aliases included).
   */
  readonly machines: ReadonlyMap<string, number>;
  /** CPU model names the emulator knows for custom mode. */
  readonly cpuModels: ReadonlySet<string>;
  /** CPU modes libvirt supports for this domain type (`host-passthrough` is absent under TCG). */
  readonly cpuModes: ReadonlySet<string>;
  readonly memoryBytes: bigint;
}

export interface CapabilitiesSource {
  getCapabilities(): Promise<string>;
  getDomainCapabilities(a: { emulator: string; arch: string; machine: string; virtType: string }): Promise<string>;
}

const ATTR = (name: string): RegExp => new RegExp(`\\b${name}=['"]([^'"]*)['"]`);

/** `<machine maxCpus='288' canonical='pc-q35-7.2'>q35</machine>` of the x86_64 hvm guest. */
export function parseMachines(capabilities: string, emulator: string): Map<string, number> {
  const machines = new Map<string, number>();
  const guests = capabilities.split('<guest>').slice(1).filter((guest) => /<arch name=['"]x86_64['"]/.test(guest) && guest.includes('<os_type>hvm</os_type>'));
  // The guest of our emulator; any x86_64 one when the daemon names the binary differently.
  const ours = guests.filter((guest) => guest.includes(`<emulator>${emulator}</emulator>`));
  for (const guest of ours.length > 0 ? ours : guests) {
    for (const m of guest.matchAll(/<machine([^>]*)>([^<]+)<\/machine>/g)) {
      const attrs = m[1] ?? '';
      const max = Number(ATTR('maxCpus').exec(attrs)?.[1] ?? '1');
      machines.set((m[2] ?? '').trim(), max);
      const canonical = ATTR('canonical').exec(attrs)?.[1];
      if (canonical !== undefined) machines.set(canonical, max);
    }
  }
  return machines;
}

/** Supported CPU modes and the custom-mode model names of domain capabilities. */
export function parseCpu(domainCapabilities: string): { modes: Set<string>; models: Set<string> } {
  const modes = new Set<string>();
  const models = new Set<string>();
  for (const m of domainCapabilities.matchAll(/<mode name=['"]([^'"]+)['"] supported=['"]yes['"]/g)) modes.add(m[1] ?? '');
  const custom = /<mode name=['"]custom['"] supported=['"]yes['"]>([\s\S]*?)<\/mode>/.exec(domainCapabilities)?.[1] ?? '';
  for (const m of custom.matchAll(/<model[^>]*>([^<]+)<\/model>/g)) models.add((m[1] ?? '').trim());
  return { modes, models };
}

/** `<machine>pc-q35-7.2</machine>` and `<vcpu max='288'/>` of domain capabilities. */
export function parseDomainMachine(domainCapabilities: string): { canonical: string | undefined; maxVcpus: number | undefined } {
  const canonical = /<machine>([^<]+)<\/machine>/.exec(domainCapabilities)?.[1]?.trim();
  const max = ATTR('max').exec(/<vcpu[^>]*>/.exec(domainCapabilities)?.[0] ?? '')?.[1];
  return { canonical, maxVcpus: max === undefined ? undefined : Number(max) };
}

export async function readNodeFacts(source: CapabilitiesSource, emulator: string, virtType: string, machine: string): Promise<NodeFacts> {
  const memoryBytes = BigInt(totalmem());
  let domcaps: string;
  try {
    domcaps = await source.getDomainCapabilities({ emulator, arch: 'x86_64', machine, virtType });
  } catch (err) {
    // libvirt answers INVALID_ARG for a machine type the emulator does not have.
    if (!(err instanceof LibvirtError) || err.codeName !== 'INVALID_ARG') throw err;
    const machines = parseMachines(await source.getCapabilities(), emulator);
    // Refused for another reason: nothing is proven, the caller leaves the checks to libvirt.
    if (machines.size === 0 || machines.has(machine)) throw err;
    return { machines, cpuModels: new Set(), cpuModes: new Set(), memoryBytes };
  }
  const { canonical, maxVcpus = 1 } = parseDomainMachine(domcaps);
  const machines = new Map([[machine, maxVcpus]]);
  if (canonical !== undefined) machines.set(canonical, maxVcpus);
  const { modes, models } = parseCpu(domcaps);
  return { machines, cpuModels: models, cpuModes: modes, memoryBytes };
}
