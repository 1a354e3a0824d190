// VirtualMachine (kubevirt.io/v1): the fields podvirt reads and writes, spelled as KubeVirt
// spells them. The template's spec is a VMI spec and goes through the one decode path.

import type { ObjectMeta } from './object-meta.js';
import type { VmiCondition } from './condition.js';
import type { VmiSpec } from './vmi.js';

export type RunStrategy = 'Always' | 'RerunOnFailure' | 'Manual' | 'Halted' | 'Once';

export interface VmTemplate {
  metadata?: Pick<ObjectMeta, 'labels' | 'annotations'>;
  spec: VmiSpec;
}

export interface VmSpec {
  /** The older switch: true is `Always`, false is `Halted`. Never set together with runStrategy. */
  running?: boolean;
  runStrategy?: RunStrategy;
  template: VmTemplate;
}

export type StateChangeAction = 'Start' | 'Stop';

/** A start or stop asked for through the VM's subresources (or a `kubectl patch` doing the same). */
export interface StateChangeRequest {
  action: StateChangeAction;
  /** For `Stop`: the VMI to stop; a request naming another VMI is stale and dropped. */
  uid?: string;
  data?: Record<string, string>;
}

/** Consecutive VMIs that failed before ever running, and when the next one may start. */
export interface VmStartFailure {
  consecutiveFailCount: number;
  lastFailedVMIUID?: string;
  retryAfterTimestamp?: string;
}

export type VmPrintableStatus =
  | 'Stopped'
  | 'Provisioning'
  | 'Starting'
  | 'Running'
  | 'Paused'
  | 'Stopping'
  | 'Terminating'
  | 'Migrating'
  | 'Unknown'
  | 'ErrorUnschedulable'
  | 'ErrImagePull'
  | 'ImagePullBackOff'
  | 'ErrorPvcNotFound'
  | 'CrashLoopBackOff';

export interface VmStatus {
  created?: boolean;
  ready?: boolean;
  printableStatus?: VmPrintableStatus;
  conditions?: VmiCondition[];
  stateChangeRequests?: StateChangeRequest[];
  startFailure?: VmStartFailure;
  /** The strategy last acted on; set once a VMI was created. */
  runStrategy?: RunStrategy;
  desiredGeneration?: number;
  observedGeneration?: number;
}

export interface VirtualMachine {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  spec: VmSpec;
  status?: VmStatus;
}
