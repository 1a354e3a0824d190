/**
 * The slice of a kubevirt.io/v1 VirtualMachineInstance the launcher reads, with KubeVirt's
 * JSON names. Every field is optional because the VMI arrives as untrusted JSON; the
 * converter reports a missing required field by its path instead of crashing.
 */
export interface Vmi {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string; uid?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: VmiSpec;
}

export interface VmiSpec {
  domain?: DomainSpec;
  volumes?: Volume[];
  architecture?: string;
  terminationGracePeriodSeconds?: number;
  nodeSelector?: Record<string, string>;
}

export interface DomainSpec {
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  memory?: { guest?: string };
  cpu?: { cores?: number; sockets?: number; threads?: number; model?: string };
  firmware?: {
    uuid?: string;
    serial?: string;
    kernelBoot?: {
      kernelArgs?: string;
      container?: { image?: string; kernelPath?: string; initrdPath?: string; imagePullPolicy?: string };
    };
  };
  machine?: { type?: string };
  features?: { acpi?: { enabled?: boolean }; apic?: { enabled?: boolean; endOfInterrupt?: boolean }; smm?: { enabled?: boolean } };
  clock?: {
    utc?: { offsetSeconds?: number };
    timezone?: string;
    timer?: Record<string, { present?: boolean; tickPolicy?: string; track?: string }>;
  };
  devices?: Devices;
}

export interface Devices {
  disks?: Disk[];
  interfaces?: unknown[];
  rng?: Record<string, never>;
  watchdog?: { name?: string; i6300esb?: { action?: string } };
  autoattachSerialConsole?: boolean;
  autoattachMemBalloon?: boolean;
  autoattachGraphicsDevice?: boolean;
}

export interface Disk {
  name?: string;
  disk?: { bus?: string; readonly?: boolean };
  cdrom?: { bus?: string; readonly?: boolean; tray?: string };
  bootOrder?: number;
  serial?: string;
  cache?: string;
}

export interface Volume {
  name?: string;
  containerDisk?: { image?: string; path?: string; imagePullPolicy?: string };
  emptyDisk?: { capacity?: string };
  cloudInitNoCloud?: CloudInitNoCloud;
  hostDisk?: { path?: string; type?: string; capacity?: string; shared?: boolean };
}

export interface CloudInitNoCloud {
  userData?: string;
  userDataBase64?: string;
  /** KubeVirt spells the user-data secret reference `secretRef`. */
  secretRef?: { name?: string };
  networkData?: string;
  networkDataBase64?: string;
  networkDataSecretRef?: { name?: string };
}
