// An in-memory VM cluster for the VM controller's tests: the VM and VMI caches (which lag the
// API until `observe()`), the writes the controller makes, and the Events it records.

import type { EventType, VirtualMachine, VirtualMachineInstance, VmStatus } from '@podvirt/api';
import type { MetadataPatch, VmClient, VmEventRecorder, VmiStore, VmStore } from '../src/kube/cluster-roles.js';
import { ControllerError } from '../src/controller-error.js';

export interface VmEvent {
  readonly type: EventType;
  readonly reason: string;
  readonly message: string;
}

export class FakeVms implements VmStore, VmiStore, VmClient, VmEventRecorder {
  /** What the API server holds. */
  readonly apiVms = new Map<string, VirtualMachine>();
  readonly apiVmis = new Map<string, VirtualMachineInstance>();
  /** What the informers hold. */
  readonly cachedVms = new Map<string, VirtualMachine>();
  readonly cachedVmis = new Map<string, VirtualMachineInstance>();
  readonly calls: string[] = [];
  readonly events: VmEvent[] = [];
  #version = 100;
  #uid = 0;

  addVm(vm: VirtualMachine): void {
    const key = `${vm.metadata.namespace ?? ''}/${vm.metadata.name ?? ''}`;
    this.apiVms.set(key, vm);
    this.cachedVms.set(key, vm);
  }

  /** The informers catch up with the API server. */
  observe(): void {
    this.cachedVms.clear();
    for (const [k, v] of this.apiVms) this.cachedVms.set(k, v);
    this.cachedVmis.clear();
    for (const [k, v] of this.apiVmis) this.cachedVmis.set(k, v);
  }

  vm(key = 'default/testvm'): VirtualMachine {
    const vm = this.apiVms.get(key);
    if (vm === undefined) throw new Error(`no VM ${key}`);
    return vm;
  }

  getVm(namespace: string, name: string): VirtualMachine | undefined {
    return this.cachedVms.get(`${namespace}/${name}`);
  }

  listVms(): VirtualMachine[] {
    return [...this.cachedVms.values()];
  }

  get(namespace: string, name: string): VirtualMachineInstance | undefined {
    return this.cachedVmis.get(`${namespace}/${name}`);
  }

  list(): VirtualMachineInstance[] {
    return [...this.cachedVmis.values()];
  }

  readVm(namespace: string, name: string): Promise<VirtualMachine | undefined> {
    this.calls.push('read VM');
    return Promise.resolve(this.apiVms.get(`${namespace}/${name}`));
  }

  setVmFinalizers(vm: VirtualMachine, finalizers: readonly string[]): Promise<VirtualMachine> {
    this.calls.push('set VM finalizers');
    const key = `${vm.metadata.namespace ?? ''}/${vm.metadata.name ?? ''}`;
    const current = this.apiVms.get(key);
    if (current === undefined || current.metadata.resourceVersion !== vm.metadata.resourceVersion) {
      return Promise.reject(new ControllerError('CONTROLLER_ERR_CONFLICT', `VM ${key} changed`));
    }
    if (current.metadata.deletionTimestamp !== undefined && finalizers.length === 0) {
      // Its last finalizer off: a VM being deleted goes.
      this.apiVms.delete(key);
      return Promise.resolve({ ...current, metadata: { ...current.metadata, finalizers: [] } });
    }
    const next = { ...current, metadata: { ...current.metadata, finalizers: [...finalizers], resourceVersion: String(++this.#version) } };
    this.apiVms.set(key, next);
    return Promise.resolve(next);
  }

  patchVmiMetadata(namespace: string, name: string, patch: MetadataPatch): Promise<VirtualMachineInstance> {
    this.calls.push(patch.ownerReferences !== undefined ? 'adopt VMI' : 'set VMI finalizers');
    const key = `${namespace}/${name}`;
    const current = this.apiVmis.get(key);
    if (current === undefined || (patch.resourceVersion !== undefined && current.metadata.resourceVersion !== patch.resourceVersion)) {
      return Promise.reject(new ControllerError('CONTROLLER_ERR_CONFLICT', `VMI ${key} changed`));
    }
    const metadata = {
      ...current.metadata,
      ...(patch.finalizers === undefined ? {} : { finalizers: [...patch.finalizers] }),
      ...(patch.ownerReferences === undefined ? {} : { ownerReferences: [...patch.ownerReferences] }),
      resourceVersion: String(++this.#version),
    };
    if (current.metadata.deletionTimestamp !== undefined && (metadata.finalizers ?? []).length === 0) {
      this.apiVmis.delete(key);
      return Promise.resolve({ ...current, metadata });
    }
    const next = { ...current, metadata };
    this.apiVmis.set(key, next);
    return Promise.resolve(next);
  }

  replaceVmStatus(vm: VirtualMachine): Promise<VirtualMachine> {
    this.calls.push('update VM status');
    const key = `${vm.metadata.namespace ?? ''}/${vm.metadata.name ?? ''}`;
    const current = this.apiVms.get(key);
    if (current === undefined || current.metadata.resourceVersion !== vm.metadata.resourceVersion) {
      return Promise.reject(new ControllerError('CONTROLLER_ERR_CONFLICT', `VM ${key} changed`));
    }
    // Stored as JSON, as the API server does: a property set to undefined is no property.
    const next = { ...current, status: JSON.parse(JSON.stringify(vm.status ?? {})) as VmStatus, metadata: { ...current.metadata, resourceVersion: String(++this.#version) } };
    this.apiVms.set(key, next);
    return Promise.resolve(next);
  }

  setVmRunning(vm: VirtualMachine): Promise<VirtualMachine> {
    this.calls.push('set VM running');
    const key = `${vm.metadata.namespace ?? ''}/${vm.metadata.name ?? ''}`;
    const current = this.vm(key);
    const spec = current.spec.runStrategy !== undefined ? { ...current.spec, runStrategy: 'Always' as const } : { ...current.spec, running: true };
    const next = { ...current, spec, metadata: { ...current.metadata, resourceVersion: String(++this.#version) } };
    this.apiVms.set(key, next);
    return Promise.resolve(next);
  }

  createVmi(vmi: VirtualMachineInstance): Promise<VirtualMachineInstance> {
    this.calls.push('create VMI');
    const key = `${vmi.metadata.namespace ?? ''}/${vmi.metadata.name ?? ''}`;
    if (this.apiVmis.has(key)) return Promise.reject(new ControllerError('CONTROLLER_ERR_CONFLICT', `VMI ${key} already exists`));
    const created = { ...structuredClone(vmi), metadata: { ...structuredClone(vmi.metadata), uid: `vmi-${++this.#uid}`, resourceVersion: String(++this.#version) } };
    this.apiVmis.set(key, created);
    return Promise.resolve(created);
  }

  deleteVmi(namespace: string, name: string, uid: string): Promise<void> {
    this.calls.push('delete VMI');
    const key = `${namespace}/${name}`;
    if (this.apiVmis.get(key)?.metadata.uid === uid) this.apiVmis.delete(key);
    return Promise.resolve();
  }

  recordVm(_vm: VirtualMachine, type: EventType, reason: string, message: string): Promise<void> {
    this.events.push({ type, reason, message });
    return Promise.resolve();
  }

  /** The VMI's handler and controller move it to `phase` (and the informer sees it). */
  setVmiPhase(phase: 'Running' | 'Failed' | 'Succeeded' | 'Scheduling', ran = phase === 'Running', key = 'default/testvm'): VirtualMachineInstance {
    const vmi = this.apiVmis.get(key);
    if (vmi === undefined) throw new Error(`no VMI ${key}`);
    const next: VirtualMachineInstance = {
      ...vmi,
      status: {
        ...vmi.status,
        phase,
        ...(ran ? { phaseTransitionTimestamps: [{ phase: 'Running', phaseTransitionTimestamp: '2025-01-01T00:00:30Z' }] } : {}),
        ...(phase === 'Running' ? { conditions: [{ type: 'Ready', status: 'True' }] } : {}),
      },
    };
    this.apiVmis.set(key, next);
    this.cachedVmis.set(key, next);
    return next;
  }
}
