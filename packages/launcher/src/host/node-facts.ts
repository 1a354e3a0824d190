// What this node's emulator can give a domain, read once from the launcher's own libvirt
// daemon: the machine types with their vCPU limits (capabilities), the CPU models and modes
// for the domain type (domain capabilities), and the node's memory. The converter's caller
// checks a VMI against them before anything is defined (node-check.ts).

import { totalmem } from 'node:os';

export interface NodeFacts {
  /** Machine type name (aliases such as `q35` included) → the most vCPUs it takes. */
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

export async function readNodeFacts(source: CapabilitiesSource, emulator: string, virtType: string): Promise<NodeFacts> {
  const machines = parseMachines(await source.getCapabilities(), emulator);
  const domcaps = await source.getDomainCapabilities({ emulator, arch: 'x86_64', machine: 'q35', virtType });
  const { modes, models } = parseCpu(domcaps);
  return { machines, cpuModels: models, cpuModes: modes, memoryBytes: BigInt(totalmem()) };
}
