// `status` of a VMI: written by the controller (phase up to Scheduled, nodeName, activePods,
// qosClass, launcherContainerImageVersion) and by the handler (everything the domain shows).

import type { VmiPhase } from '../phases.js';
import type { VmiCondition } from './condition.js';
import type { QuantityValue } from './domain.js';
import type { VmiMigrationState } from './migration.js';
import type { VolumePhase } from '../volume-phases.js';

export interface VmiNetworkInterfaceStatus {
  name?: string;
  mac?: string;
  ipAddress?: string;
  ipAddresses?: string[];
  interfaceName?: string;
  /** Where the data came from: `domain`, `guest-agent`, `multus-status`, joined by commas. */
  infoSource?: string;
  queueCount?: number;
  linkState?: string;
  podInterfaceName?: string;
}

export interface GuestOsInfo {
  name?: string;
  kernelRelease?: string;
  version?: string;
  prettyName?: string;
  versionId?: string;
  kernelVersion?: string;
  machine?: string;
  id?: string;
}

export interface PhaseTransitionTimestamp {
  phase: VmiPhase;
  phaseTransitionTimestamp: string;
}

export interface MemoryStatus {
  guestAtBoot?: QuantityValue;
  guestCurrent?: QuantityValue;
  guestRequested?: QuantityValue;
}

export interface CpuTopology {
  cores?: number;
  sockets?: number;
  threads?: number;
}

/** What the controller learned of a PVC volume's claim, as KubeVirt records it. */
export interface PersistentVolumeClaimInfo {
  claimName?: string;
  accessModes?: string[];
  volumeMode?: 'Filesystem' | 'Block';
  capacity?: Record<string, QuantityValue>;
  requests?: Record<string, QuantityValue>;
  /** The share of a filesystem volume its filesystem keeps for itself, e.g. "0.055". */
  filesystemOverhead?: string;
}

/** Where a hotplugged volume's attachment pod is: KubeVirt's HotplugVolumeStatus. */
export interface HotplugVolumeStatus {
  attachPodName?: string;
  attachPodUID?: string;
}

export interface VolumeStatus {
  name: string;
  target: string;
  phase?: VolumePhase;
  reason?: string;
  message?: string;
  persistentVolumeClaimInfo?: PersistentVolumeClaimInfo;
  /** Set for a hotplugged volume only. */
  hotplugVolume?: HotplugVolumeStatus;
}

export type QosClass = 'Guaranteed' | 'Burstable' | 'BestEffort';
export type MigrationMethod = 'BlockMigration' | 'LiveMigration';

export interface VmiStatus {
  phase?: VmiPhase;
  reason?: string;
  nodeName?: string;
  conditions?: VmiCondition[];
  interfaces?: VmiNetworkInterfaceStatus[];
  guestOSInfo?: GuestOsInfo;
  phaseTransitionTimestamps?: PhaseTransitionTimestamp[];
  /** Launcher pod UID → node name, for every pod that belongs to this VMI. */
  activePods?: Record<string, string>;
  qosClass?: QosClass;
  /** The machine type qemu really runs, e.g. `pc-q35-8.2` for a requested `q35`. */
  machine?: { type?: string };
  /** `frozen` while the guest filesystems are frozen; absent otherwise. */
  fsFreezeStatus?: string;
  launcherContainerImageVersion?: string;
  migrationMethod?: MigrationMethod;
  /** The last migration of this VMI: where it went and how it ended. */
  migrationState?: VmiMigrationState;
  memory?: MemoryStatus;
  currentCPUTopology?: CpuTopology;
  volumeStatus?: VolumeStatus[];
  /**
   * The node an eviction asked this VMI to leave (written by podvirt-api's eviction webhook);
   * the controller migrates it away and clears the mark once it runs elsewhere.
   */
  evacuationNodeName?: string;
}
