import type { PrepareStep } from './prepare-step.js';

/** What a disk needs to know about its volume: the file qemu opens and how. */
export interface VolumeSource {
  readonly path: string;
  readonly format: 'raw' | 'qcow2';
  readonly backing?: { readonly path: string; readonly format: 'raw' | 'qcow2' };
  readonly discard?: 'unmap';
  readonly shareable?: boolean;
  /** A block device (`<disk type="block">`), not a file. */
  readonly block?: boolean;
  readonly readonly?: boolean;
  /** PVC and hostDisk: cache and io get KubeVirt's defaults from the disk's O_DIRECT support. */
  readonly persistent?: boolean;
  /** Files to create before the domain starts; none for a persistent disk, opened by the inspect step. */
  readonly prepare?: PrepareStep;
}
