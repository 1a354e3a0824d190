// `spec.volumes`: where each disk's bytes come from. Exactly one source per volume.

import type { PullPolicy, QuantityValue } from './domain.js';

export interface ContainerDiskSource {
  image: string;
  /** Path of the disk file inside the image; KubeVirt looks under /disk when unset. */
  path?: string;
  imagePullPolicy?: PullPolicy;
}

export interface EmptyDiskSource {
  capacity: QuantityValue;
}

export interface LocalObjectReference {
  name: string;
}

export interface CloudInitNoCloudSource {
  userData?: string;
  userDataBase64?: string;
  /** KubeVirt spells the user-data secret reference `secretRef` in JSON. */
  secretRef?: LocalObjectReference;
  networkData?: string;
  networkDataBase64?: string;
  networkDataSecretRef?: LocalObjectReference;
}

export type HostDiskType = 'Disk' | 'DiskOrCreate';

export interface HostDiskSource {
  path: string;
  type: HostDiskType;
  capacity?: QuantityValue;
  shared?: boolean;
}

/** A PersistentVolumeClaim in the VMI's own namespace; its volume holds the disk. */
export interface PersistentVolumeClaimSource {
  claimName: string;
  readOnly?: boolean;
  /** Attached to a running VMI through an attachment pod rather than its launcher pod; its disk uses bus scsi. */
  hotpluggable?: boolean;
}

export interface Volume {
  name: string;
  persistentVolumeClaim?: PersistentVolumeClaimSource;
  containerDisk?: ContainerDiskSource;
  emptyDisk?: EmptyDiskSource;
  cloudInitNoCloud?: CloudInitNoCloudSource;
  hostDisk?: HostDiskSource;
}

/** The JSON keys of the volume sources podvirt implements. */
export const VOLUME_SOURCE_KEYS = ['containerDisk', 'emptyDisk', 'cloudInitNoCloud', 'hostDisk', 'persistentVolumeClaim'] as const;

export type VolumeSourceKey = (typeof VOLUME_SOURCE_KEYS)[number];
