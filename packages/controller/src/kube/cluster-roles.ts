// The small slices of the Kubernetes API the controller uses, named for their role. The real
// implementations speak through @podvirt/kube-runtime (kube-*.ts, cluster-informers.ts, its
// EventRecorder); the unit tests use an in-memory fake. Pod shapes are client-node's model
// types, used as types only: nothing of client-node is loaded at run time. Failures are
// ControllerErrors: CONTROLLER_ERR_CONFLICT on a stale resourceVersion, CONTROLLER_ERR_NOT_FOUND when
// the object is gone, CONTROLLER_ERR_API_FAILED otherwise.

import type { CoreV1Event, V1Node, V1Pod } from '@kubernetes/client-node';
import type { EventType, OwnerReference, VirtualMachine, VirtualMachineInstance, VirtualMachineInstanceMigration } from '@podvirt/api';

/** The informer's view of VMIs: possibly stale, never blocking. */
export interface VmiStore {
  get(namespace: string, name: string): VirtualMachineInstance | undefined;
  list(): VirtualMachineInstance[];
}

/** The informer's view of launcher pods. */
export interface PodStore {
  /** Launcher pods whose controlling owner is the VMI with this UID. */
  ownedBy(namespace: string, vmiUid: string): V1Pod[];
  /** The VMI's hotplug attachment pods; no hotplug is done without it. */
  attachmentPods?(namespace: string, vmiUid: string): V1Pod[];
}

/** The kubelet's FailedMount Events about pods, as an informer holds them. */
export interface MountEventStore {
  mountEvents(namespace: string, podUid: string): CoreV1Event[];
}

export interface MetadataPatch {
  /** Labels to set; `null` removes one. */
  readonly labels?: Readonly<Record<string, string | null>>;
  /** The whole new finalizer list. */
  readonly finalizers?: readonly string[];
  /** The whole new owner reference list (a VM adopting its VMI). */
  readonly ownerReferences?: readonly OwnerReference[];
  /** Makes the patch fail with CONTROLLER_ERR_CONFLICT unless the object is still at this version. */
  readonly resourceVersion?: string;
}

export interface VmiClient {
  /** A fresh read from the API server; undefined when the VMI is gone. */
  read(namespace: string, name: string, signal?: AbortSignal): Promise<VirtualMachineInstance | undefined>;
  /** Writes `vmi.status` through the status subresource, guarded by its resourceVersion. */
  replaceStatus(vmi: VirtualMachineInstance, signal?: AbortSignal): Promise<VirtualMachineInstance>;
  patchMetadata(namespace: string, name: string, patch: MetadataPatch, signal?: AbortSignal): Promise<VirtualMachineInstance>;
}

export interface PodClient {
  create(namespace: string, pod: V1Pod, signal?: AbortSignal): Promise<V1Pod>;
  /** Deletes the pod with this UID; a pod already gone is not an error. */
  delete(namespace: string, name: string, uid: string | undefined, signal?: AbortSignal): Promise<void>;
}

export interface EventRecorder {
  /** Best effort: an Event that cannot be written is logged, never thrown. */
  record(vmi: VirtualMachineInstance, type: EventType, reason: string, message: string): Promise<void>;
}

/** The informer's view of VirtualMachineInstanceMigrations. */
export interface MigrationStore {
  getMigration(namespace: string, name: string): VirtualMachineInstanceMigration | undefined;
  listMigrations(): VirtualMachineInstanceMigration[];
}

export interface MigrationClient {
  /** A fresh read; undefined when the migration is gone. */
  readMigration(namespace: string, name: string, signal?: AbortSignal): Promise<VirtualMachineInstanceMigration | undefined>;
  /** Writes `status` through the status subresource, guarded by the resourceVersion. */
  replaceMigrationStatus(vmim: VirtualMachineInstanceMigration, signal?: AbortSignal): Promise<VirtualMachineInstanceMigration>;
  /** Sets the whole finalizer list, guarded by `resourceVersion`. */
  setMigrationFinalizers(namespace: string, name: string, finalizers: readonly string[], resourceVersion: string | undefined, signal?: AbortSignal): Promise<VirtualMachineInstanceMigration>;
}

export interface MigrationEventRecorder {
  /** Best effort, as EventRecorder.record. */
  recordMigration(vmim: VirtualMachineInstanceMigration, type: EventType, reason: string, message: string): Promise<void>;
}

/** The informer's view of VirtualMachines. */
export interface VmStore {
  getVm(namespace: string, name: string): VirtualMachine | undefined;
  listVms(): VirtualMachine[];
}

/** What the VM controller writes: the VM's status, strategy and finalizers, and the VMI it owns. */
export interface VmClient {
  /** A fresh read from the API server (before an adoption); undefined when the VM is gone. */
  readVm(namespace: string, name: string, signal?: AbortSignal): Promise<VirtualMachine | undefined>;
  /** Sets the VM's whole finalizer list, guarded by its resourceVersion. */
  setVmFinalizers(vm: VirtualMachine, finalizers: readonly string[], signal?: AbortSignal): Promise<VirtualMachine>;
  /** Patches the VMI's finalizers or owner references (an adoption), guarded as the patch says. */
  patchVmiMetadata(namespace: string, name: string, patch: MetadataPatch, signal?: AbortSignal): Promise<VirtualMachineInstance>;
  /** Writes `vm.status` through the status subresource, guarded by its resourceVersion. */
  replaceVmStatus(vm: VirtualMachine, signal?: AbortSignal): Promise<VirtualMachine>;
  /** Sets spec.runStrategy (or spec.running when the VM uses that), guarded by the resourceVersion. */
  setVmRunning(vm: VirtualMachine, signal?: AbortSignal): Promise<VirtualMachine>;
  createVmi(vmi: VirtualMachineInstance, signal?: AbortSignal): Promise<VirtualMachineInstance>;
  /** Deletes the VMI with this UID; gone already is not an error. */
  deleteVmi(namespace: string, name: string, uid: string, signal?: AbortSignal): Promise<void>;
}

export interface VmEventRecorder {
  /** Best effort, as EventRecorder.record. */
  recordVm(vm: VirtualMachine, type: EventType, reason: string, message: string): Promise<void>;
}

/** What the evacuation part writes: a migration away from the marked node, and the mark's end. */
export interface EvacuationClient {
  createMigration(namespace: string, vmim: VirtualMachineInstanceMigration, signal?: AbortSignal): Promise<VirtualMachineInstanceMigration>;
  /** Removes `status.evacuationNodeName` (a status merge patch); a VMI gone is not an error. */
  clearEvacuation(namespace: string, name: string, signal?: AbortSignal): Promise<void>;
}

/** The informer's view of Nodes (the handler's heartbeat and schedulable label). */
export interface NodeStore {
  getNode(name: string): V1Node | undefined;
  listNodes(): V1Node[];
}

/** What the node part writes: the schedulable label of a node whose handler went silent, and Events on the Node. */
export interface NodeClient {
  markUnschedulable(nodeName: string, signal?: AbortSignal): Promise<void>;
  /** Best effort, as EventRecorder.record. */
  recordNode(node: V1Node, type: EventType, reason: string, message: string): Promise<void>;
}
