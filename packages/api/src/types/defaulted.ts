// The VMI after decodeVmi: validated, and with every default applyDefaults writes made
// explicit in the type, so a reader (the launcher's converter above all) trusts the value and
// carries no default of its own.

import type { CdromTarget, Devices, Disk, DiskBus, DiskTarget, Watchdog, WatchdogAction } from './devices.js';
import type { Cpu, DomainSpec, Features, FeatureState, Machine, Memory, QuantityValue } from './domain.js';
import type { VirtualMachineInstance, VmiSpec } from './vmi.js';

export interface DefaultedDisk extends Disk {
  disk?: DiskTarget & { bus: DiskBus };
  cdrom?: CdromTarget & { bus: DiskBus; readonly: boolean; tray: 'open' | 'closed' };
}

export interface DefaultedWatchdog extends Watchdog {
  i6300esb: { action: WatchdogAction };
}

export interface DefaultedDevices extends Devices {
  disks?: DefaultedDisk[];
  watchdog?: DefaultedWatchdog;
  autoattachSerialConsole: boolean;
  autoattachMemBalloon: boolean;
  autoattachGraphicsDevice: boolean;
}

export interface DefaultedDomainSpec extends DomainSpec {
  cpu: Cpu & { sockets: number; cores: number; threads: number };
  /** Validation demands a size somewhere; defaulting copies it here. */
  memory: Memory & { guest: QuantityValue };
  machine: Machine & { type: string };
  features: Features & { acpi: FeatureState & { enabled: boolean } };
  devices: DefaultedDevices;
}

export interface DefaultedVmiSpec extends VmiSpec {
  domain: DefaultedDomainSpec;
  terminationGracePeriodSeconds: number;
}

export interface DefaultedVmi extends VirtualMachineInstance {
  spec: DefaultedVmiSpec;
}
