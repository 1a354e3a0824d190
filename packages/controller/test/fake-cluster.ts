// An in-memory stand-in for the API server behind the controller's role interfaces: objects
// get UIDs and resourceVersions, stale writes fail with CONTROLLER_ERR_CONFLICT, deleted pods
// vanish (no kubelet here). The stores see every write at once unless `lagging` is set.

import type { V1Pod } from '@kubernetes/client-node';
import type { EventType, VirtualMachineInstance } from '@podvirt/api';
import type { EventRecorder, MetadataPatch, PodClient, PodStore, VmiClient, VmiStore } from '../src/kube/cluster-roles.js';
import { ControllerError } from '../src/controller-error.js';

export interface RecordedEvent {
  readonly name: string | undefined;
  readonly type: EventType;
  readonly reason: string;
  readonly message: string;
}

export class FakeCluster implements VmiStore, PodStore, VmiClient, PodClient, EventRecorder {
  readonly vmis = new Map<string, VirtualMachineInstance>();
  readonly podsByName = new Map<string, V1Pod>();
  readonly events: RecordedEvent[] = [];
  readonly calls: string[] = [];
  /** Fail the next N status writes with a conflict, as if someone else wrote first. */
  conflictsToInject = 0;
  /** Fail pod creation with this message. */
  createFailure: string | undefined;
  #rv = 1;
  #uid = 1;

  #nextRv(): string {
    return String(++this.#rv);
  }

  addVmi(vmi: VirtualMachineInstance): VirtualMachineInstance {
    const stored = structuredClone(vmi);
    stored.metadata.uid ??= `vmi-uid-${this.#uid++}`;
    stored.metadata.resourceVersion = this.#nextRv();
    this.vmis.set(`${stored.metadata.namespace ?? ''}/${stored.metadata.name ?? ''}`, stored);
    return structuredClone(stored);
  }

  addPod(pod: V1Pod): V1Pod {
    const stored = structuredClone(pod);
    stored.metadata ??= {};
    stored.metadata.name ??= `${stored.metadata.generateName ?? 'pod-'}${this.#uid}`;
    stored.metadata.uid ??= `pod-uid-${this.#uid++}`;
    stored.metadata.resourceVersion = this.#nextRv();
    this.podsByName.set(`${stored.metadata.namespace ?? ''}/${stored.metadata.name}`, stored);
    return structuredClone(stored);
  }

  vmi(namespace: string, name: string): VirtualMachineInstance {
    const vmi = this.vmis.get(`${namespace}/${name}`);
    if (!vmi) throw new Error(`no VMI ${namespace}/${name}`);
    return vmi;
  }

  // VmiStore
  get(namespace: string, name: string): VirtualMachineInstance | undefined {
    const vmi = this.vmis.get(`${namespace}/${name}`);
    return vmi ? structuredClone(vmi) : undefined;
  }

  // VmiClient
  async read(namespace: string, name: string): Promise<VirtualMachineInstance | undefined> {
    await Promise.resolve();
    this.calls.push('read');
    return this.get(namespace, name);
  }

  list(): VirtualMachineInstance[] {
    return [...this.vmis.values()].map((v) => structuredClone(v));
  }

  // PodStore
  ownedBy(namespace: string, vmiUid: string): V1Pod[] {
    return [...this.podsByName.values()]
      .filter((p) => p.metadata?.namespace === namespace && p.metadata.ownerReferences?.some((r) => r.controller === true && r.uid === vmiUid))
      .map((p) => structuredClone(p));
  }

  // VmiClient
  async replaceStatus(vmi: VirtualMachineInstance): Promise<VirtualMachineInstance> {
    await Promise.resolve();
    this.calls.push(`status ${vmi.status?.phase ?? ''}`);
    const stored = this.#checkedVmi(vmi.metadata.namespace ?? '', vmi.metadata.name ?? '', vmi.metadata.resourceVersion);
    if (this.conflictsToInject > 0) {
      this.conflictsToInject -= 1;
      stored.metadata.resourceVersion = this.#nextRv();
      throw new ControllerError('CONTROLLER_ERR_CONFLICT', 'the object has been modified');
    }
    stored.status = structuredClone(vmi.status ?? {});
    stored.metadata.resourceVersion = this.#nextRv();
    return structuredClone(stored);
  }

  async patchMetadata(namespace: string, name: string, patch: MetadataPatch): Promise<VirtualMachineInstance> {
    await Promise.resolve();
    this.calls.push(`patch ${JSON.stringify({ labels: patch.labels, finalizers: patch.finalizers })}`);
    const stored = this.#checkedVmi(namespace, name, patch.resourceVersion);
    if (patch.finalizers) stored.metadata.finalizers = [...patch.finalizers];
    for (const [key, value] of Object.entries(patch.labels ?? {})) {
      stored.metadata.labels ??= {};
      if (value === null) delete stored.metadata.labels[key];
      else stored.metadata.labels[key] = value;
    }
    stored.metadata.resourceVersion = this.#nextRv();
    if (stored.metadata.deletionTimestamp && (stored.metadata.finalizers ?? []).length === 0) this.vmis.delete(`${namespace}/${name}`);
    return structuredClone(stored);
  }

  #checkedVmi(namespace: string, name: string, resourceVersion: string | undefined): VirtualMachineInstance {
    const stored = this.vmis.get(`${namespace}/${name}`);
    if (!stored) throw new ControllerError('CONTROLLER_ERR_NOT_FOUND', `VMI ${namespace}/${name} not found`);
    if (resourceVersion !== undefined && resourceVersion !== stored.metadata.resourceVersion) {
      throw new ControllerError('CONTROLLER_ERR_CONFLICT', 'the object has been modified');
    }
    return stored;
  }

  // PodClient
  async create(namespace: string, pod: V1Pod): Promise<V1Pod> {
    await Promise.resolve();
    this.calls.push('create pod');
    if (this.createFailure !== undefined) throw new ControllerError('CONTROLLER_ERR_API_FAILED', this.createFailure);
    return this.addPod({ ...pod, metadata: { ...pod.metadata, namespace } });
  }

  async delete(namespace: string, name: string): Promise<void> {
    await Promise.resolve();
    this.calls.push(`delete pod ${name}`);
    this.podsByName.delete(`${namespace}/${name}`);
  }

  // EventRecorder
  async record(vmi: VirtualMachineInstance, type: EventType, reason: string, message: string): Promise<void> {
    await Promise.resolve();
    this.events.push({ name: vmi.metadata.name, type, reason, message });
  }
}
