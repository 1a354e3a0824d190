// FakeCluster plus VirtualMachineInstanceMigrations: a store, a status/finalizer client that
// checks resourceVersions, and the migration's Events. A migration whose last finalizer goes
// while it is being deleted vanishes, as the API server does it.

import type { EventType, VirtualMachineInstanceMigration } from '@podvirt/api';
import type { MigrationClient, MigrationEventRecorder, MigrationStore } from '../src/kube/cluster-roles.js';
import { ControllerError } from '../src/controller-error.js';
import type { MigrationSyncDeps } from '../src/reconcile/sync-migration.js';
import { PodExpectations } from '../src/reconcile/pod-expectations.js';
import { FakeCluster, type RecordedEvent } from './fake-cluster.js';
import type { Logger } from 'pino';

export class FakeMigrationCluster extends FakeCluster implements MigrationStore, MigrationClient, MigrationEventRecorder {
  readonly migrations = new Map<string, VirtualMachineInstanceMigration>();
  readonly migrationEvents: RecordedEvent[] = [];
  #mrv = 1000;
  #muid = 1;

  addMigration(name: string, created = '2025-01-01T00:04:00Z', vmiName = 'testvmi'): VirtualMachineInstanceMigration {
    const vmim: VirtualMachineInstanceMigration = {
      apiVersion: 'kubevirt.io/v1',
      kind: 'VirtualMachineInstanceMigration',
      metadata: { name, namespace: 'default', uid: `vmim-uid-${this.#muid++}`, resourceVersion: String(++this.#mrv), creationTimestamp: created },
      spec: { vmiName },
    };
    this.migrations.set(`default/${name}`, vmim);
    return structuredClone(vmim);
  }

  migration(name: string): VirtualMachineInstanceMigration {
    const vmim = this.migrations.get(`default/${name}`);
    if (vmim === undefined) throw new Error(`no migration ${name}`);
    return vmim;
  }

  /** kubectl delete: a finalizer keeps it until removed. */
  deleteMigration(name: string): void {
    const vmim = this.migration(name);
    if ((vmim.metadata.finalizers ?? []).length === 0) this.migrations.delete(`default/${name}`);
    else {
      vmim.metadata.deletionTimestamp = '2025-01-01T00:06:00Z';
      vmim.metadata.resourceVersion = String(++this.#mrv);
    }
  }

  getMigration(namespace: string, name: string): VirtualMachineInstanceMigration | undefined {
    const vmim = this.migrations.get(`${namespace}/${name}`);
    return vmim === undefined ? undefined : structuredClone(vmim);
  }

  listMigrations(): VirtualMachineInstanceMigration[] {
    return [...this.migrations.values()].map((m) => structuredClone(m));
  }

  async readMigration(namespace: string, name: string): Promise<VirtualMachineInstanceMigration | undefined> {
    await Promise.resolve();
    this.calls.push('read migration');
    return this.getMigration(namespace, name);
  }

  #checked(namespace: string, name: string, rv: string | undefined): VirtualMachineInstanceMigration {
    const stored = this.migrations.get(`${namespace}/${name}`);
    if (stored === undefined) throw new ControllerError('CONTROLLER_ERR_NOT_FOUND', `migration ${name} not found`);
    if (rv !== undefined && rv !== stored.metadata.resourceVersion) throw new ControllerError('CONTROLLER_ERR_CONFLICT', 'the object has been modified');
    return stored;
  }

  async replaceMigrationStatus(vmim: VirtualMachineInstanceMigration): Promise<VirtualMachineInstanceMigration> {
    await Promise.resolve();
    this.calls.push(`migration status ${vmim.status?.phase ?? ''}`);
    const stored = this.#checked(vmim.metadata.namespace ?? '', vmim.metadata.name ?? '', vmim.metadata.resourceVersion);
    stored.status = structuredClone(vmim.status ?? {});
    stored.metadata.resourceVersion = String(++this.#mrv);
    return structuredClone(stored);
  }

  async setMigrationFinalizers(namespace: string, name: string, finalizers: readonly string[], rv: string | undefined): Promise<VirtualMachineInstanceMigration> {
    await Promise.resolve();
    this.calls.push(`migration finalizers ${JSON.stringify(finalizers)}`);
    const stored = this.#checked(namespace, name, rv);
    stored.metadata.finalizers = [...finalizers];
    stored.metadata.resourceVersion = String(++this.#mrv);
    if (stored.metadata.deletionTimestamp !== undefined && finalizers.length === 0) this.migrations.delete(`${namespace}/${name}`);
    return structuredClone(stored);
  }

  async recordMigration(vmim: VirtualMachineInstanceMigration, type: EventType, reason: string, message: string): Promise<void> {
    await Promise.resolve();
    this.migrationEvents.push({ name: vmim.metadata.name, type, reason, message });
  }

  deps(log: Logger, now = new Date('2025-01-01T00:05:00Z')): MigrationSyncDeps {
    return {
      migrations: this,
      migrationClient: this,
      vmis: this,
      vmiClient: this,
      pods: this,
      podClient: this,
      events: this,
      migrationEvents: this,
      expectations: new PodExpectations(),
      podConfig: { image: 'podvirt/launcher:test', allowEmulation: true, random: () => 0 },
      now: () => now,
      log,
    };
  }
}
