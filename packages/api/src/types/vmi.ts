// The VirtualMachineInstance object as podvirt reads it. Fields podvirt does not support are
// not typed here; findUnsupportedFields works on the raw JSON to name them.

import type { Network } from './devices.js';
import type { EvictionStrategy } from '../eviction-strategy.js';
import type { DomainSpec } from './domain.js';
import type { ObjectMeta } from './object-meta.js';
import type { VmiStatus } from './status.js';
import type { Volume } from './volumes.js';

export interface VmiSpec {
  domain: DomainSpec;
  volumes?: Volume[];
  networks?: Network[];
  /** Only `amd64`: KubeVirt's defaulting writes it, podvirt runs x86-64 guests only. */
  architecture?: 'amd64';
  terminationGracePeriodSeconds?: number;
  nodeSelector?: Record<string, string>;
  /** What an eviction of the launcher pod does; the cluster default when unset. */
  evictionStrategy?: EvictionStrategy;
}

export interface VirtualMachineInstance {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  spec: VmiSpec;
  status?: VmiStatus;
}
