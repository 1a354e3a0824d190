// Defaults of spec.domain outside the devices: machine, resources, memory, CPU, firmware,
// features and clock. Each mutates the fresh copy made by applyDefaults.

import { deriveFirmwareUuid } from './firmware-uuid.js';
import { toBytes } from './quantity-math.js';
import type { DomainSpec, FeatureState, QuantityValue, Timer } from './types/domain.js';

export function defaultMachine(domain: DomainSpec, machineType: string): void {
  // KubeVirt's cluster default machine type; an explicit one is kept.
  if (!domain.machine?.type) domain.machine = { ...domain.machine, type: machineType };
}

export function defaultResources(domain: DomainSpec): void {
  const resources = (domain.resources ??= {});
  const requests = (resources.requests ??= {});
  const limits = resources.limits ?? {};
  // A limit alone is also the request, so the scheduler reserves what the VM may use.
  if (requests.cpu === undefined && limits.cpu !== undefined) requests.cpu = limits.cpu;
  if (requests.memory === undefined && limits.memory !== undefined) requests.memory = limits.memory;
  // Guest memory alone becomes the request (KubeVirt at 100% overcommit), so the pod is sized.
  if (requests.memory === undefined && domain.memory?.guest !== undefined) requests.memory = domain.memory.guest;
  // The guest sees what was requested, so the converter reads one number.
  if (domain.memory?.guest === undefined && requests.memory !== undefined) {
    domain.memory = { ...domain.memory, guest: requests.memory };
  }
  if (Object.keys(requests).length === 0) delete resources.requests;
  if (Object.keys(resources).length === 0) delete domain.resources;
}

/** Whole CPUs in a quantity, rounded up; 1 when it cannot be read (validation reports it). */
function wholeCpus(value: QuantityValue | undefined): number | undefined {
  if (value === undefined) return undefined;
  try {
    const cpus = Number(toBytes(value));
    return cpus >= 1 ? cpus : 1;
  } catch {
    return 1;
  }
}

export function defaultCpu(domain: DomainSpec): void {
  const cpu = (domain.cpu ??= {});
  if (cpu.cores === undefined && cpu.sockets === undefined && cpu.threads === undefined) {
    // A CPU count given only as a resource becomes sockets, the topology guests schedule best.
    const resources = domain.resources;
    cpu.sockets = wholeCpus(resources?.limits?.cpu ?? resources?.requests?.cpu) ?? 1;
  }
  // An unset count means one, as in KubeVirt's converter; written out so readers need not know.
  cpu.sockets ??= 1;
  cpu.cores ??= 1;
  cpu.threads ??= 1;
}

export function defaultFirmware(domain: DomainSpec, vmiName: string | undefined): void {
  const firmware = (domain.firmware ??= {});
  // A stable SMBIOS UUID keeps guest licensing and cloud-init instance identity across restarts.
  // Without a name (generateName not yet resolved) there is nothing stable to derive it from.
  if (!firmware.uuid && vmiName) firmware.uuid = deriveFirmwareUuid(vmiName);
  const container = firmware.kernelBoot?.container;
  if (container) container.imagePullPolicy ??= pullPolicyFor(container.image);
}

/** Kubernetes' rule for images: `:latest` or untagged images are pulled always. */
export function pullPolicyFor(image: string): 'Always' | 'IfNotPresent' {
  const untagged = !/[:@]/.test(image.slice(image.lastIndexOf('/') + 1));
  return image.endsWith(':latest') || untagged ? 'Always' : 'IfNotPresent';
}

function enable<T extends FeatureState>(feature: T | undefined): void {
  if (feature) feature.enabled ??= true;
}

export function defaultFeatures(domain: DomainSpec): void {
  const features = (domain.features ??= {});
  // ACPI is on unless switched off: graceful shutdown is an ACPI power-button press.
  features.acpi ??= {};
  // Naming a feature means wanting it; only `enabled: false` switches one off.
  enable(features.acpi);
  enable(features.apic);
  enable(features.smm);
}

export function defaultClock(domain: DomainSpec): void {
  const timer: Timer | undefined = domain.clock?.timer;
  if (!timer) return;
  // A listed timer is present unless `present: false` keeps the machine type from adding it.
  for (const entry of [timer.hpet, timer.kvm, timer.pit, timer.rtc, timer.hyperv]) {
    if (entry) entry.present ??= true;
  }
}
