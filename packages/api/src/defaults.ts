// applyDefaults: what virt-api's mutating webhook would fill in, so that the handler, the
// launcher and the converter all read one explicit object. Pure: returns a new object, never
// touches its argument, and applying it twice changes nothing more.
//
// Deliberately not defaulted, unlike KubeVirt:
// - `cpu.model` stays unset (KubeVirt writes `host-model`): under emulation the converter
//   picks the model;
// - the firmware UUID is derived from the name, not random (see firmware-uuid.ts).

import {
  defaultClock,
  defaultCpu,
  defaultFeatures,
  defaultFirmware,
  defaultMachine,
  defaultResources,
} from './defaults-compute.js';
import { defaultAutoattach, defaultDisks, defaultVolumeDisks, defaultVolumes, defaultWatchdog } from './defaults-devices.js';
import { defaultPodInterface } from './defaults-network.js';
import { hotplugVolumeNames } from './hotplug-volume.js';
import { jsonClone } from './json-value.js';
import { resolveDefaultsOptions, type DefaultsOptions } from './defaults-options.js';
import type { DefaultedVmi } from './types/defaulted.js';
import type { VirtualMachineInstance } from './types/vmi.js';

function defaultStatus(vmi: VirtualMachineInstance): void {
  const { memory, cpu } = vmi.spec.domain;
  // virt-api records the memory and CPU topology the VM boots with; hotplug reads them later.
  if (memory?.guest !== undefined && !vmi.status?.memory) {
    const guest = memory.guest;
    vmi.status = { ...vmi.status, memory: { guestAtBoot: guest, guestCurrent: guest, guestRequested: guest } };
  }
  if (cpu && !vmi.status?.currentCPUTopology) {
    const topology = {
      ...(cpu.cores !== undefined && { cores: cpu.cores }),
      ...(cpu.sockets !== undefined && { sockets: cpu.sockets }),
      ...(cpu.threads !== undefined && { threads: cpu.threads }),
    };
    vmi.status = { ...vmi.status, currentCPUTopology: topology };
  }
}

/**
 * Returns a defaulted copy of `vmi`. Expects an object that passed validateVmi (decodeVmi is
 * the way in for everything but tests of this file); unknown fields are carried over untouched.
 */
export function applyDefaults(vmi: VirtualMachineInstance, options?: DefaultsOptions): DefaultedVmi {
  const settings = resolveDefaultsOptions(options);
  const copy = jsonClone(vmi);
  const domain = copy.spec.domain;
  // A grace period gives the guest time to shut down cleanly before it is destroyed.
  copy.spec.terminationGracePeriodSeconds ??= settings.terminationGracePeriodSeconds;
  defaultMachine(domain, settings.machineType);
  defaultResources(domain);
  defaultCpu(domain);
  defaultFirmware(domain, copy.metadata.name);
  defaultFeatures(domain);
  defaultClock(domain);
  domain.devices ??= {};
  defaultVolumeDisks(copy.spec);
  defaultDisks(domain.devices, settings.diskBus, hotplugVolumeNames(copy.spec));
  defaultWatchdog(domain.devices);
  defaultAutoattach(domain.devices);
  defaultPodInterface(copy.spec, domain.devices, settings.networkInterface);
  defaultVolumes(copy.spec.volumes);
  defaultStatus(copy);
  // Each default* above writes the field DefaultedVmi declares required.
  return copy as DefaultedVmi;
}
