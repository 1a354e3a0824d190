// `spec.domain` without its devices: resources, CPU, memory, firmware, machine, features and
// clock. JSON names are KubeVirt's; quantities stay strings (see quantity.ts to read them).

import type { Devices } from './devices.js';

/** A Kubernetes quantity as it appears in JSON: `"128Mi"`, `"500m"`, or a bare number. */
export type QuantityValue = string | number;

export interface ResourceList {
  memory?: QuantityValue;
  cpu?: QuantityValue;
}

export interface ResourceRequirements {
  requests?: ResourceList;
  limits?: ResourceList;
}

export interface Cpu {
  cores?: number;
  sockets?: number;
  threads?: number;
  /** `host-model`, `host-passthrough`, or a libvirt CPU model name such as `qemu64`. */
  model?: string;
}

export interface Memory {
  /** Memory visible to the guest; defaults to the memory request. */
  guest?: QuantityValue;
}

export type PullPolicy = 'Always' | 'IfNotPresent' | 'Never';

export interface KernelBootContainer {
  image: string;
  imagePullPolicy?: PullPolicy;
  kernelPath?: string;
  initrdPath?: string;
}

export interface KernelBoot {
  kernelArgs?: string;
  container?: KernelBootContainer;
}

export interface Firmware {
  /** SMBIOS system UUID seen by the guest. */
  uuid?: string;
  /** SMBIOS system serial number. */
  serial?: string;
  kernelBoot?: KernelBoot;
}

export interface Machine {
  /** QEMU machine type, e.g. `q35` or `pc-q35-8.2`. */
  type?: string;
}

export interface FeatureState {
  enabled?: boolean;
}

export interface FeatureApic extends FeatureState {
  endOfInterrupt?: boolean;
}

export interface Features {
  acpi?: FeatureState;
  apic?: FeatureApic;
  smm?: FeatureState;
}

/** KubeVirt names a timer's enabled flag `present` in JSON. */
export interface TimerState {
  present?: boolean;
}

export interface TickingTimer<Policy extends string> extends TimerState {
  tickPolicy?: Policy;
}

export interface RtcTimer extends TickingTimer<'delay' | 'catchup'> {
  track?: 'guest' | 'wall';
}

export interface Timer {
  hpet?: TickingTimer<'delay' | 'catchup' | 'merge' | 'discard'>;
  kvm?: TimerState;
  pit?: TickingTimer<'delay' | 'catchup' | 'discard'>;
  rtc?: RtcTimer;
  hyperv?: TimerState;
}

export interface ClockOffsetUtc {
  offsetSeconds?: number;
}

export interface Clock {
  utc?: ClockOffsetUtc;
  /** A TZ database name such as `Europe/Berlin`. */
  timezone?: string;
  timer?: Timer;
}

export interface DomainSpec {
  resources?: ResourceRequirements;
  cpu?: Cpu;
  memory?: Memory;
  machine?: Machine;
  firmware?: Firmware;
  features?: Features;
  clock?: Clock;
  devices: Devices;
}
