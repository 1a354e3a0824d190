// Turns informer events into migration keys and runs workers over a keyed work queue; each key
// is reconciled by syncMigration. A migration looks again when it changes, when its VMI
// changes (the handlers report through the VMI's migrationState) and when a launcher pod of
// its VMI changes (the target pod starting or failing). When a migration ends, the others of
// the same VMI look again: the next one may start.

import type { V1Pod } from '@kubernetes/client-node';
import { isFinalMigrationPhase, MIGRATION_JOB_LABEL, type VirtualMachineInstance, type VirtualMachineInstanceMigration } from '@podvirt/api';
import { splitObjectKey, type ItemBackoffOptions } from '@podvirt/kube-runtime';
import type { Logger } from 'pino';
import { KeyedWorkers, type QueueObserver } from './keyed-workers.js';
import { migrationKey, syncMigration, type MigrationSyncDeps } from './sync-migration.js';
import { ownerKey } from './vmi-controller.js';

export interface MigrationControllerOptions {
  readonly deps: MigrationSyncDeps;
  readonly workers: number;
  readonly log: Logger;
  readonly queue?: ItemBackoffOptions;
  /** Sees the work queue at work (metrics). */
  readonly queueObserver?: QueueObserver;
}

export class MigrationController {
  readonly #o: MigrationControllerOptions;
  readonly #workers: KeyedWorkers;

  constructor(options: MigrationControllerOptions) {
    this.#o = options;
    this.#workers = new KeyedWorkers({
      workers: options.workers,
      ...(options.queue === undefined ? {} : { queue: options.queue }),
      keys: () => options.deps.migrations.listMigrations().map(migrationKey),
      sync: (key, log, signal) => syncMigration({ ...options.deps, log }, key, signal),
      log: (key) => options.log.child({ migration: key }),
      failure: 'migration reconcile failed, requeueing',
      ...(options.queueObserver === undefined ? {} : { observer: options.queueObserver }),
    });
  }

  /** Keys waiting for a worker (metrics). */
  get queueDepth(): number {
    return this.#workers.depth;
  }

  migrationChanged(vmim: VirtualMachineInstanceMigration): void {
    this.#workers.add(migrationKey(vmim));
    this.#enqueueFor(vmim.metadata.namespace ?? '', vmim.spec?.vmiName ?? '', vmim.metadata.uid);
  }

  vmiChanged(vmi: VirtualMachineInstance): void {
    this.#enqueueFor(vmi.metadata.namespace ?? '', vmi.metadata.name ?? '');
  }

  podChanged(pod: V1Pod, change: 'add' | 'update' | 'delete'): void {
    const owner = ownerKey(pod);
    if (owner === undefined) return;
    const { namespace, name } = splitObjectKey(owner);
    if (change === 'add') {
      // A created target pod is counted against its migration's expectation.
      for (const vmim of this.#o.deps.migrations.listMigrations()) {
        if (vmim.metadata.uid !== undefined && pod.metadata?.labels?.[MIGRATION_JOB_LABEL] === vmim.metadata.uid) this.#o.deps.expectations.creationObserved(migrationKey(vmim));
      }
    }
    this.#enqueueFor(namespace, name);
  }

  /** Every unfinished migration of the VMI `namespace/name`, but `except`. */
  #enqueueFor(namespace: string, vmiName: string, except?: string): void {
    if (!this.#workers.running) return;
    for (const vmim of this.#o.deps.migrations.listMigrations()) {
      if (vmim.metadata.uid === except || vmim.metadata.namespace !== namespace || vmim.spec?.vmiName !== vmiName) continue;
      if (!isFinalMigrationPhase(vmim.status?.phase) || (vmim.metadata.finalizers?.length ?? 0) > 0) this.#workers.add(migrationKey(vmim));
    }
  }

  /** Reconciles until `signal` aborts: every migration first, then whatever changes. */
  run(signal: AbortSignal): Promise<void> {
    return this.#workers.run(signal);
  }
}
