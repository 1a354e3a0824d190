// The migration executor: settles identity (which migration, which VMI, is the cache caught
// up), asks decideMigration what to do, and does it. Order: the finalizer goes on before the
// target pod exists; the VMI is written (migrationState, then the hand-over's nodeName, then its
// labels) before the migration's phase that depends on it; pods are deleted before the
// migration says Failed; the finalizer comes off last. A write that loses an optimistic-
// concurrency race is redone from fresh reads of both objects.

import type { V1Pod } from '@kubernetes/client-node';
import { EventType, isFinalMigrationPhase, MIGRATION_FINALIZER, MigrationPhase, type VirtualMachineInstance, type VirtualMachineInstanceMigration } from '@podvirt/api';
import { splitObjectKey } from '@podvirt/kube-runtime';
import type { Logger } from 'pino';
import { checkClaims, type ClaimStore } from '../decide/claim-check.js';
import type { EventRecorder, MigrationClient, MigrationEventRecorder, MigrationStore, MountEventStore, PodClient, PodStore, VmiClient, VmiStore } from '../kube/cluster-roles.js';
import { isConflict } from '../controller-error.js';
import { decideMigration } from '../decide/decide-migration.js';
import type { MigrationDecision, MigrationEvent } from '../decide/migration-decision.js';
import type { PodExpectations } from './pod-expectations.js';
import type { LauncherPodConfig } from '../render/render-launcher-pod.js';
import { renderTargetPod } from '../render/render-target-pod.js';
import { PodEventReason, type SyncResult } from './sync-vmi.js';
import { isMigrationTargetPod } from '../decide/vmi-pod.js';
import { timeOf } from '../decide/launcher-pod-state.js';

export interface MigrationSyncDeps {
  readonly migrations: MigrationStore;
  readonly migrationClient: MigrationClient;
  readonly vmis: VmiStore;
  readonly vmiClient: VmiClient;
  readonly pods: PodStore;
  readonly podClient: PodClient;
  readonly events: EventRecorder;
  readonly migrationEvents: MigrationEventRecorder;
  /** Target pod creations not yet seen, keyed by the migration's key. */
  readonly expectations: PodExpectations;
  readonly podConfig: LauncherPodConfig;
  readonly now: () => Date;
  readonly log: Logger;
  readonly claims?: ClaimStore;
  readonly mountEvents?: MountEventStore;
  readonly unschedulableTimeoutMs?: number;
}

const MAX_CONFLICT_RETRIES = 3;

export function migrationKey(vmim: Pick<VirtualMachineInstanceMigration, 'metadata'>): string {
  return `${vmim.metadata.namespace ?? ''}/${vmim.metadata.name ?? ''}`;
}

function created(vmim: VirtualMachineInstanceMigration): number {
  return timeOf(vmim.metadata.creationTimestamp) ?? 0;
}

/** Another unfinished migration of the same VMI goes first: one already past Pending, or an older one. */
export function blockingMigration(vmim: VirtualMachineInstanceMigration, all: readonly VirtualMachineInstanceMigration[]): string | undefined {
  const namespace = vmim.metadata.namespace;
  const vmiName = vmim.spec?.vmiName;
  const started = (m: VirtualMachineInstanceMigration): boolean => (m.status?.phase ?? '') !== '' && m.status?.phase !== MigrationPhase.Pending;
  for (const other of all) {
    if (other.metadata.uid === vmim.metadata.uid || other.metadata.namespace !== namespace || other.spec?.vmiName !== vmiName) continue;
    if (isFinalMigrationPhase(other.status?.phase)) continue;
    const older = created(other) < created(vmim) || (created(other) === created(vmim) && (other.metadata.name ?? '') < (vmim.metadata.name ?? ''));
    // A deleted pending migration never starts: it does not hold the others back.
    const pendingAndDeleted = !started(other) && other.metadata.deletionTimestamp != null;
    if (started(other) || (older && !pendingAndDeleted)) return other.metadata.name;
  }
  return undefined;
}

class MigrationAttempt {
  constructor(
    private readonly deps: MigrationSyncDeps,
    private readonly key: string,
    public vmim: VirtualMachineInstanceMigration,
    public vmi: VirtualMachineInstance | undefined,
    private readonly signal: AbortSignal | undefined,
  ) {}

  get pods(): V1Pod[] {
    const uid = this.vmi?.metadata.uid;
    return uid === undefined ? [] : this.deps.pods.ownedBy(this.vmim.metadata.namespace ?? '', uid);
  }

  decide(): MigrationDecision {
    const { deps, vmim, vmi } = this;
    const pods = this.pods;
    const targets = pods.filter((p) => isMigrationTargetPod(p, vmim.metadata.uid));
    const mountEvents = deps.mountEvents === undefined ? [] : targets.flatMap((p) => deps.mountEvents?.mountEvents(p.metadata?.namespace ?? '', p.metadata?.uid ?? '') ?? []);
    return decideMigration({
      vmim,
      vmi,
      pods,
      waitsFor: blockingMigration(vmim, deps.migrations.listMigrations()),
      now: deps.now(),
      mountEvents,
      ...(deps.unschedulableTimeoutMs === undefined ? {} : { unschedulableTimeoutMs: deps.unschedulableTimeoutMs }),
    });
  }

  async setFinalizers(finalizers: string[]): Promise<void> {
    const { namespace = '', name = '', resourceVersion } = this.vmim.metadata;
    this.vmim = await this.deps.migrationClient.setMigrationFinalizers(namespace, name, finalizers, resourceVersion, this.signal);
  }

  async createTargetPod(vmi: VirtualMachineInstance): Promise<void> {
    const { deps, key } = this;
    const claims = deps.claims === undefined ? undefined : checkClaims(vmi, deps.claims).claims;
    deps.expectations.expectCreation(key);
    let pod: V1Pod;
    try {
      pod = await deps.podClient.create(vmi.metadata.namespace ?? '', renderTargetPod(vmi, this.vmim.metadata.uid ?? '', deps.podConfig, claims), this.signal);
    } catch (err) {
      deps.expectations.creationObserved(key);
      const message = `Error creating the migration target pod: ${err instanceof Error ? err.message : String(err)}`;
      await deps.migrationEvents.recordMigration(this.vmim, EventType.Warning, PodEventReason.FailedCreate, message);
      throw err;
    }
    deps.log.info({ pod: pod.metadata?.name }, 'created migration target pod');
    await deps.migrationEvents.recordMigration(this.vmim, EventType.Normal, PodEventReason.SuccessfulCreate, `Created migration target pod ${pod.metadata?.name ?? ''}`);
  }

  async writeVmi(decision: MigrationDecision, vmi: VirtualMachineInstance): Promise<VirtualMachineInstance> {
    let written = vmi;
    const change = decision.vmi;
    if (change !== undefined) {
      const status = { ...vmi.status, migrationState: change.migrationState, ...(change.nodeName === undefined ? {} : { nodeName: change.nodeName }) };
      written = await this.deps.vmiClient.replaceStatus({ ...vmi, status }, this.signal);
      this.deps.log.debug({ nodeName: status.nodeName }, 'VMI migration state written');
    }
    if (decision.vmiLabels !== undefined) {
      written = await this.deps.vmiClient.patchMetadata(vmi.metadata.namespace ?? '', vmi.metadata.name ?? '', { labels: decision.vmiLabels }, this.signal);
    }
    return written;
  }

  async record(event: MigrationEvent, vmi: VirtualMachineInstance | undefined): Promise<void> {
    if (event.on !== 'vmi') await this.deps.migrationEvents.recordMigration(this.vmim, event.type, event.reason, event.message);
    if (event.on !== 'migration' && vmi !== undefined) await this.deps.events.record(vmi, event.type, event.reason, event.message);
  }

  async apply(decision: MigrationDecision): Promise<SyncResult> {
    const { deps } = this;
    const namespace = this.vmim.metadata.namespace ?? '';
    if (decision.addFinalizer) await this.setFinalizers([...(this.vmim.metadata.finalizers ?? []), MIGRATION_FINALIZER]);
    let vmi = this.vmi;
    if (decision.createTargetPod && vmi !== undefined) await this.createTargetPod(vmi);
    if (vmi !== undefined) vmi = await this.writeVmi(decision, vmi);
    for (const name of decision.deletePods) {
      await deps.podClient.delete(namespace, name, undefined, this.signal);
      deps.log.info({ pod: name }, 'deleted migration target pod');
      await deps.migrationEvents.recordMigration(this.vmim, EventType.Normal, PodEventReason.SuccessfulDelete, `Deleted migration target pod ${name}`);
    }
    if (decision.statusChanged) {
      this.vmim = await deps.migrationClient.replaceMigrationStatus({ ...this.vmim, status: decision.status }, this.signal);
      deps.log.info({ phase: decision.status.phase }, 'migration status written');
    }
    if (decision.removeFinalizer) await this.setFinalizers((this.vmim.metadata.finalizers ?? []).filter((f) => f !== MIGRATION_FINALIZER));
    for (const event of decision.events) await this.record(event, vmi);
    return decision.requeueAfterMs === undefined ? {} : { requeueAfterMs: decision.requeueAfterMs };
  }
}

/** Reconciles the migration `namespace/name`. Throws to have the key retried with backoff. */
export async function syncMigration(deps: MigrationSyncDeps, key: string, signal?: AbortSignal): Promise<SyncResult> {
  const { namespace, name } = splitObjectKey(key);
  let vmim = deps.migrations.getMigration(namespace, name);
  if (vmim === undefined) {
    deps.expectations.forget(key);
    return {};
  }
  deps = { ...deps, log: deps.log.child({ uid: vmim.metadata.uid, vmi: vmim.spec?.vmiName }) };
  const waiting = deps.expectations.pendingFor(key);
  if (waiting > 0) return { requeueAfterMs: waiting };
  let vmi = deps.vmis.get(namespace, vmim.spec?.vmiName ?? '');
  for (let attempt = 0; ; attempt++) {
    const run = new MigrationAttempt(deps, key, vmim, vmi, signal);
    try {
      return await run.apply(run.decide());
    } catch (err) {
      if (!isConflict(err) || attempt >= MAX_CONFLICT_RETRIES) throw err;
      deps.log.debug({ attempt }, 'conflict, retrying on fresh objects');
      const fresh = await deps.migrationClient.readMigration(namespace, name, signal);
      if (fresh === undefined) return {};
      vmim = fresh;
      vmi = await deps.vmiClient.read(namespace, vmim.spec?.vmiName ?? '', signal);
      if (deps.expectations.pendingFor(key) > 0) return { requeueAfterMs: deps.expectations.pendingFor(key) };
    }
  }
}
