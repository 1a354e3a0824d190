// The evacuation part of the controller: a VMI marked by an eviction (status.evacuationNodeName)
// is reconciled by decideEvacuation, keyed by VMI. A migration it creates is remembered until the
// informer shows it, so a sync on a lagging cache never creates a second one; after a restart
// the informer's first list shows every migration already made.

import { EventReason, EventType, MIGRATION_API_VERSION, MIGRATION_KIND, vmiLogBindings, type EvictionStrategy, type VirtualMachineInstance, type VirtualMachineInstanceMigration } from '@podvirt/api';
import { objectKey, splitObjectKey, type ItemBackoffOptions } from '@podvirt/kube-runtime';
import type { Logger } from 'pino';
import { decideEvacuation, EVACUATION_ANNOTATION, EVACUATION_NAME_PREFIX } from '../decide/decide-evacuation.js';
import type { EvacuationClient, EventRecorder, MigrationStore, VmiStore } from '../kube/cluster-roles.js';
import { KeyedWorkers, type KeyedSyncResult, type QueueObserver } from './keyed-workers.js';

export interface EvacuationDeps {
  readonly vmis: VmiStore;
  readonly migrations: MigrationStore;
  readonly client: EvacuationClient;
  readonly events: EventRecorder;
  readonly clusterDefault: EvictionStrategy;
  readonly now: () => Date;
}

export interface EvacuationControllerOptions {
  readonly deps: EvacuationDeps;
  readonly workers: number;
  readonly log: Logger;
  readonly queue?: ItemBackoffOptions;
  readonly queueObserver?: QueueObserver;
}

/** How long a created migration may stay out of the cache before it is no longer waited for. */
const CREATION_EXPECTATION_MS = 60_000;

export function evacuationMigration(vmi: VirtualMachineInstance, nodeName: string): VirtualMachineInstanceMigration {
  return {
    apiVersion: MIGRATION_API_VERSION,
    kind: MIGRATION_KIND,
    metadata: { generateName: EVACUATION_NAME_PREFIX, namespace: vmi.metadata.namespace ?? '', annotations: { [EVACUATION_ANNOTATION]: nodeName } },
    spec: { vmiName: vmi.metadata.name ?? '' },
  } as VirtualMachineInstanceMigration;
}

export class EvacuationController {
  readonly #o: EvacuationControllerOptions;
  readonly #workers: KeyedWorkers;
  /** VMI key → the migration created for it and not yet in the cache, with when. */
  readonly #created = new Map<string, { name: string; at: number }>();

  constructor(options: EvacuationControllerOptions) {
    this.#o = options;
    this.#workers = new KeyedWorkers({
      workers: options.workers,
      ...(options.queue === undefined ? {} : { queue: options.queue }),
      // Only marked VMIs have anything to do.
      keys: () => options.deps.vmis.list().filter((v) => (v.status?.evacuationNodeName ?? '') !== '').map(objectKey),
      sync: (key, log, signal) => this.#sync(key, log, signal),
      log: (key) => options.log.child(vmiLogBindings(splitObjectKey(key))),
      failure: 'evacuation failed, requeueing',
      ...(options.queueObserver === undefined ? {} : { observer: options.queueObserver }),
    });
  }

  get queueDepth(): number {
    return this.#workers.depth;
  }

  vmiChanged(vmi: VirtualMachineInstance): void {
    if ((vmi.status?.evacuationNodeName ?? '') !== '') this.#workers.add(objectKey(vmi));
  }

  /** A migration changed: its VMI looks again (the next one may be due). */
  migrationChanged(vmim: VirtualMachineInstanceMigration): void {
    const key = `${vmim.metadata.namespace ?? ''}/${vmim.spec?.vmiName ?? ''}`;
    if (this.#created.get(key)?.name === vmim.metadata.name) this.#created.delete(key);
    this.#workers.add(key);
  }

  run(signal: AbortSignal): Promise<void> {
    return this.#workers.run(signal);
  }

  #pending(key: string): boolean {
    const created = this.#created.get(key);
    if (created === undefined) return false;
    const { namespace } = splitObjectKey(key);
    if (this.#o.deps.migrations.getMigration(namespace, created.name) !== undefined || this.#o.deps.now().getTime() - created.at > CREATION_EXPECTATION_MS) {
      this.#created.delete(key);
      return false;
    }
    return true;
  }

  async #sync(key: string, log: Logger, signal: AbortSignal): Promise<KeyedSyncResult> {
    const { deps } = this.#o;
    const { namespace, name } = splitObjectKey(key);
    const vmi = deps.vmis.get(namespace, name);
    if (vmi === undefined) {
      this.#created.delete(key);
      return {};
    }
    const migrations = deps.migrations.listMigrations().filter((m) => m.metadata.namespace === namespace && m.spec?.vmiName === name);
    const decision = decideEvacuation({ vmi, migrations, clusterDefault: deps.clusterDefault, creationPending: this.#pending(key), now: deps.now() });
    switch (decision.kind) {
      case 'none':
        log.debug({ why: decision.why }, 'evacuation: nothing to do');
        return {};
      case 'wait':
        log.info({ why: decision.why, afterMs: decision.afterMs }, 'evacuation: next migration waits');
        return { requeueAfterMs: decision.afterMs };
      case 'clear':
        await deps.client.clearEvacuation(namespace, name, signal);
        log.info({ nodeName: vmi.status?.nodeName }, 'evacuation done: the VMI left the node');
        return {};
      case 'create':
        return this.#create(key, vmi, decision.nodeName, log, signal);
    }
  }

  async #create(key: string, vmi: VirtualMachineInstance, nodeName: string, log: Logger, signal: AbortSignal): Promise<KeyedSyncResult> {
    const { deps } = this.#o;
    let created;
    try {
      created = await deps.client.createMigration(vmi.metadata.namespace ?? '', evacuationMigration(vmi, nodeName), signal);
    } catch (err) {
      void deps.events.record(vmi, EventType.Warning, EventReason.FailedCreateVirtualMachineInstanceMigration, `Error creating a migration away from node ${nodeName}: ${err instanceof Error ? err.message : String(err)}`);
      throw err;
    }
    const migrationName = created.metadata.name ?? '';
    this.#created.set(key, { name: migrationName, at: deps.now().getTime() });
    void deps.events.record(vmi, EventType.Normal, EventReason.SuccessfulCreateVirtualMachineInstanceMigration, `Created migration ${migrationName} away from node ${nodeName}`);
    log.info({ migration: migrationName, nodeName }, 'evacuation: migration created');
    return {};
  }
}
