// One reconcile of a VMI key: settle identity first (which VMI, which UIDs the handler holds
// state for, is it ours?), then per UID observe the launcher, decide, act, and write the status
// and the phase-change Events. An older VMI of the same name is reconciled as "gone".

import {
  EventReason,
  EventType,
  isFinalPhase,
  NODE_NAME_LABEL,
  vmiLogBindings,
  VmiPhase,
  type VirtualMachineInstance,
  type VmiStatus,
} from '@podvirt/api';
import type { EventRecorder } from '@podvirt/kube-runtime';
import type { cmd } from '@podvirt/proto';
import type { Logger } from 'pino';
import { isHandlerError } from '../handler-error.js';
import type { MigrationCoordinator, SourceStep } from '../live-migration/migration-coordinator.js';
import { migrationRole } from '../live-migration/migration-role.js';
import type { VmiApi } from '../kube/vmi-api.js';
import type { LauncherGone } from '../launcher/launcher-connection.js';
import type { LauncherObservation, LauncherRegistry } from '../launcher/launcher-registry.js';
import { LauncherState } from '../launcher/launcher-state.js';
import { objectKey, splitObjectKey } from '@podvirt/kube-runtime';
import { computeStatus, LauncherGoneReason, type SyncFailure } from './compute-status.js';
import { syncFailure } from './sync-failure.js';
import { decide } from './decide.js';
import { DefaultedVmis } from '../kube/defaulted-vmis.js';
import { effectiveDomain } from '../launcher/domain-liveness.js';
import type { PodNetworkPhase } from '../network/pod-network-phase.js';
import { executeAction } from './execute-action.js';
import { IoErrorRetry, pausedByIoError, type IoErrorRetryOptions } from './io-error-retry.js';
import { writeStatus } from '../kube/status-writer.js';
import { readyStates, type HotplugMounts, type HotplugMountState } from '../hotplug/hotplug-mounts.js';

export interface VmiReconcilerOptions {
  readonly nodeName: string;
  readonly api: VmiApi;
  /** The informer's cache. */
  readonly source: { get(key: string): VirtualMachineInstance | undefined };
  readonly registry: LauncherRegistry;
  readonly recorder: EventRecorder<VirtualMachineInstance>;
  readonly log: Logger;
  readonly now: () => number;
  readonly network?: PodNetworkPhase;
  /** Pacing of resumes after I/O-error pauses; KubeVirt's by default. */
  readonly ioErrorRetry?: IoErrorRetryOptions;
  /** Both handler sides of live migration; absent: migrations are not acted on. */
  readonly migrations?: MigrationCoordinator;
  /** Hotplugged volumes into launcher pods; absent: not acted on (unit tests without pods). */
  readonly hotplug?: HotplugMounts;
}

export interface ReconcileResult {
  readonly requeueAfterMs?: number;
}

const PHASE_EVENTS: Readonly<Partial<Record<VmiPhase, readonly [EventType, EventReason, string]>>> = {
  [VmiPhase.Running]: [EventType.Normal, EventReason.Started, 'VirtualMachineInstance started.'],
  [VmiPhase.Succeeded]: [EventType.Normal, EventReason.Stopped, 'The VirtualMachineInstance was shut down.'],
  [VmiPhase.Failed]: [EventType.Warning, EventReason.Stopped, 'The VirtualMachineInstance crashed.'],
};

/** A removed hotplugged volume still mounted and its disk not detached yet: looked at again this soon. */
const HOTPLUG_DETACH_RETRY_MS = 1000;

const GONE_MESSAGES: Readonly<Record<string, string>> = {
  [LauncherGoneReason.exited]: 'Its launcher exited (its socket refuses connections).',
  [LauncherGoneReason.silent]: 'Its launcher did not answer for the watchdog timeout.',
};

export class VmiReconciler {
  readonly #o: VmiReconcilerOptions;
  /** Last known object of deleted VMIs the handler still holds launcher state for. */
  readonly #tombstones = new Map<string, VirtualMachineInstance>();
  /**
   * The handler's own last status write of each VMI (by key) until the informer shows it: a pass
   * that runs before the write comes back on the watch reads what it wrote, not the object the
   * write replaced, so it never acts on a phase the VMI has left (a Failed VMI synced again).
   */
  readonly #written = new Map<string, { readonly replaced: string; readonly vmi: VirtualMachineInstance }>();
  /** Each VMI's spec decoded once (the API's defaults), for decide() and the status. */
  readonly #defaulted = new DefaultedVmis();
  readonly ioErrorRetry: IoErrorRetry;

  constructor(options: VmiReconcilerOptions) {
    this.#o = options;
    this.ioErrorRetry = new IoErrorRetry(options.now, options.ioErrorRetry);
  }

  /** The informer saw the VMI deleted: keep it to address its launcher and its Events. */
  remember(vmi: VirtualMachineInstance, key: string): void {
    const uid = vmi.metadata.uid;
    if (uid !== undefined && this.#o.registry.uidsFor(key).includes(uid)) this.#tombstones.set(uid, vmi);
  }

  /** Relays a launcher notice (guest panic, I/O error ...) as an Event on its VMI. */
  relay(key: string, uid: string, notice: cmd.Notice): void {
    const vmi = this.#known(key, uid);
    if (vmi !== undefined) void this.#o.recorder.record(vmi, notice.type, notice.reason, notice.message);
  }

  /** `park`, when given, is called where the pass starts waiting on a launcher's domain start. */
  async reconcile(key: string, signal: AbortSignal, park?: () => void): Promise<ReconcileResult> {
    const current = this.#current(key);
    const uid = current?.metadata.uid;
    const ours = current !== undefined && uid !== undefined && this.#handledHere(current);
    const delays: number[] = [];
    for (const held of this.#o.registry.uidsFor(key)) {
      if (ours && held === uid) continue;
      const r = await this.#pass(key, held, await this.#stillHere(key, held, signal), signal, park);
      if (r.requeueAfterMs !== undefined) delays.push(r.requeueAfterMs);
    }
    if (ours) {
      const r = await this.#pass(key, uid, current, signal, park);
      if (r.requeueAfterMs !== undefined) delays.push(r.requeueAfterMs);
    }
    return delays.length === 0 ? {} : { requeueAfterMs: Math.min(...delays) };
  }

  /** The informer's VMI, or this handler's own write of it while the informer still shows the object it replaced. */
  #current(key: string): VirtualMachineInstance | undefined {
    const cached = this.#o.source.get(key);
    const written = this.#written.get(key);
    if (written === undefined) return cached;
    const m = cached?.metadata;
    if (m !== undefined && m.uid === written.vmi.metadata.uid && m.resourceVersion === written.replaced) return written.vmi;
    this.#written.delete(key);
    return cached;
  }

  /** Both the controller's label and its status.nodeName name this node (the label alone may run ahead). */
  #isOurs(vmi: VirtualMachineInstance): boolean {
    const node = this.#o.nodeName;
    return vmi.metadata.labels?.[NODE_NAME_LABEL] === node && vmi.status?.nodeName === node;
  }

  /**
   * Ours, or a live migration's target here: before the hand-over, and while the hand-over's
   * status and label writes are between each other (status.nodeName already names this node).
   */
  #handledHere(vmi: VirtualMachineInstance): boolean {
    if (this.#isOurs(vmi)) return true;
    if (this.#o.migrations === undefined) return false;
    const ms = vmi.status?.migrationState;
    const node = this.#o.nodeName;
    if (vmi.status?.nodeName === node && ms?.migrationUid !== undefined && ms.targetNode === node) return true;
    return migrationRole(vmi, node) === 'target';
  }

  /**
   * A held UID the informers do not show as here: gone, unless a migration moves it between
   * this handler's two informers (target → owner at the hand-over) — then the API decides, so
   * a migrated guest is never shut down as an orphan while the informers catch up.
   */
  async #stillHere(key: string, uid: string, signal: AbortSignal): Promise<VirtualMachineInstance | undefined> {
    const migrations = this.#o.migrations;
    if (migrations === undefined) return undefined;
    const last = this.#known(key, uid);
    if (!migrations.involved(uid) && last?.status?.migrationState?.migrationUid === undefined) return undefined;
    const { namespace, name } = splitObjectKey(key);
    const fresh = await this.#o.api.get(namespace, name, signal);
    return fresh !== undefined && fresh.metadata.uid === uid && this.#handledHere(fresh) ? fresh : undefined;
  }

  #known(key: string, uid: string): VirtualMachineInstance | undefined {
    const current = this.#current(key);
    return current?.metadata.uid === uid ? current : this.#tombstones.get(uid);
  }

  async #pass(key: string, uid: string, vmi: VirtualMachineInstance | undefined, signal: AbortSignal, park?: () => void): Promise<ReconcileResult> {
    const known = vmi ?? this.#tombstones.get(uid) ?? placeholder(key, uid);
    const log = this.#o.log.child(vmiLogBindings({ ...known.metadata, uid }));
    const record = (type: string, reason: string, message: string): Promise<void> => this.#o.recorder.record(known, type, reason, message);
    const migrations = this.#o.migrations;
    const role = vmi === undefined || migrations === undefined ? 'none' : migrationRole(vmi, this.#o.nodeName);
    // An endpoint of a side this node no longer plays (after the hand-over, or a new migration) closes.
    if (vmi !== undefined) await migrations?.settle(uid, role);
    if (role === 'target' && migrations !== undefined && vmi !== undefined && targetDone(vmi)) {
      // Failed or deleted before the hand-over: the controller removes the target pod; nothing of it stays here.
      await migrations.release(uid);
      this.#o.network?.forget(uid);
      if (this.#o.registry.uidsFor(key).includes(uid)) await this.#o.registry.release(uid);
      return {};
    }

    let observation: LauncherObservation;
    try {
      observation = await this.#o.registry.observe({ uid, key, vmi }, signal);
    } catch (err) {
      if (isHandlerError(err, 'HANDLER_ERR_ABORTED') || vmi === undefined) throw err;
      return this.#observeFailed(vmi, uid, err, record, log, signal);
    }

    if (role === 'target' && migrations !== undefined && vmi !== undefined) {
      return migrations.target({ uid, vmi, observation, log, signal });
    }
    let step: SourceStep | undefined;
    if (role === 'source' && migrations !== undefined && vmi !== undefined) step = await migrations.source({ uid, vmi, observation, log, signal });

    const now = this.#o.now();
    const socket = observation.connection?.client.socketPath;
    let action = step?.hold === true
      ? { type: 'nothing' as const, why: step.why, ...(step.requeueAfterMs === undefined ? {} : { requeueAfterMs: step.requeueAfterMs }) }
      : decide(vmi, this.#defaulted.get(vmi), observation.domain, observation.state, now, socket !== undefined && this.#o.hotplug?.detachDue(socket) === true);
    let resumeCheckMs: number | undefined;
    if (action.type === 'sync') {
      // Sync resumes a domain paused by an I/O error; a disk still full pauses it again at once.
      const seen = effectiveDomain(observation.domain, observation.state);
      const paused = pausedByIoError(seen);
      const delayMs = paused ? this.ioErrorRetry.delayMs(uid) : this.ioErrorRetry.holdMs(uid);
      if (delayMs !== undefined) {
        log.info({ delayMs }, 'in an I/O-error retry round, resume delayed');
        action = { type: 'nothing', why: 'paused by an I/O error, resume delayed', requeueAfterMs: delayMs };
      } else if (paused) {
        // qemu may pause it again before the launcher's view ever shows it running: no domain
        // event follows then, so look again when the next round is due.
        resumeCheckMs = this.ioErrorRetry.holdMs(uid);
      }
    }
    log.debug({ action, launcher: observation.state, domain: observation.domain?.state }, 'decided');
    // A VMI that is gone, ending or finished keeps no hotplugged disk in its pod.
    if (socket !== undefined && (vmi === undefined || vmi.metadata.deletionTimestamp != null || isFinalPhase(vmi.status?.phase) || action.type === 'delete')) {
      await this.#o.hotplug?.unmountAll(socket, uid).catch((err: unknown) => log.warn({ err }, 'unmounting hotplugged volumes failed'));
    }
    const outcome = await executeAction(action, { uid, vmi: known, observation, registry: this.#o.registry, record, log, signal, ...(park === undefined ? {} : { park }), ...(this.#o.network === undefined ? {} : { network: this.#o.network }) });
    if (action.type === 'delete' && action.cleanup) {
      this.#tombstones.delete(uid);
      this.ioErrorRetry.forget(uid);
      await migrations?.release(uid);
    }

    let hotplugRetryMs: number | undefined;
    if (vmi !== undefined) {
      const domain = this.#o.registry.cache.get(uid)?.domain ?? observation.domain;
      // A Sync that succeeded attached what the status showed mounted (the launcher read it there)
      // and detached the disks of volumes that left the spec.
      const synced = action.type === 'sync' && outcome.syncFailure === undefined && outcome.error === undefined;
      const hotplug = socket !== undefined && vmi.status?.phase === VmiPhase.Running && vmi.metadata.deletionTimestamp == null
        ? await this.#o.hotplug?.reconcile(vmi, socket, { detached: synced }).catch((err: unknown) => {
          log.warn({ err }, 'hotplugged volumes not reconciled');
          return undefined;
        })
        : undefined;
      // A removed volume still mounted: the next pass syncs (a failed Sync is retried by the queue).
      if (!synced && outcome.error === undefined && socket !== undefined && this.#o.hotplug?.detachDue(socket) === true) hotplugRetryMs = HOTPLUG_DETACH_RETRY_MS;
      const states = synced && vmi.status?.phase === VmiPhase.Running ? readyStates(vmi, hotplug) : hotplug;
      await this.#updateStatus(vmi, domain, observation.state, outcome.syncFailure, log, signal, observation.gone, step, states);
    }
    if (outcome.error !== undefined) throw outcome.error;
    const later = [outcome.requeueAfterMs ?? resumeCheckMs, hotplugRetryMs].filter((ms) => ms !== undefined);
    const requeueAfterMs = later.length === 0 ? undefined : Math.min(...later);
    return requeueAfterMs === undefined ? {} : { requeueAfterMs };
  }

  /** Discovery or version negotiation failed: say so on the VMI; an incompatible launcher is final. */
  async #observeFailed(
    vmi: VirtualMachineInstance,
    uid: string,
    err: unknown,
    record: (type: string, reason: string, message: string) => Promise<void>,
    log: Logger,
    signal: AbortSignal,
  ): Promise<ReconcileResult> {
    const failure = syncFailure(err);
    const fatal = failure.fatalReason !== undefined;
    log.warn({ err }, 'launcher unusable');
    await record(EventType.Warning, EventReason.SyncFailed, failure.message);
    const domain = this.#o.registry.cache.get(uid)?.domain;
    await this.#updateStatus(vmi, domain, LauncherState.Unreachable, failure, log, signal);
    if (fatal) return {};
    throw err;
  }

  async #updateStatus(
    vmi: VirtualMachineInstance,
    domain: cmd.Domain | undefined,
    launcher: LauncherState,
    syncFailure: SyncFailure | undefined,
    log: Logger,
    signal: AbortSignal,
    launcherGone?: LauncherGone,
    migration?: SourceStep,
    hotplug?: ReadonlyMap<string, HotplugMountState>,
  ): Promise<void> {
    const nowMs = this.#o.now();
    const migrationUid = vmi.status?.migrationState?.migrationUid ?? '';
    const compute = (v: VirtualMachineInstance): VmiStatus => {
      // A domain that is migrating or has left keeps its phase: only the migration's fields move.
      const base = migration?.hold === true ? (v.status ?? {}) : computeStatus({ vmi: v, defaulted: this.#defaulted.get(v), domain, launcher, syncFailure, launcherGone, nowMs });
      const withHotplug = withHotplugStates(base, hotplug);
      return migration === undefined || this.#o.migrations === undefined ? withHotplug : this.#o.migrations.sourceStatus(withHotplug, migrationUid, migration.outcome);
    };
    const write = await writeStatus(this.#o.api, vmi, compute, signal);
    if (write === undefined || !write.written) return;
    if (write.replacedVersion !== undefined) this.#written.set(objectKey(write.vmi), { replaced: write.replacedVersion, vmi: write.vmi });
    const from = write.before.phase ?? VmiPhase.Unset;
    const to = write.after.phase ?? VmiPhase.Unset;
    if (from === to) return;
    log.info({ from, to }, 'phase changed');
    // A VMI deleted before it had a domain did not crash: ending it is bookkeeping, not news.
    if (to === VmiPhase.Failed && domain === undefined && vmi.metadata.deletionTimestamp != null) return;
    const event = PHASE_EVENTS[to];
    if (event === undefined) return;
    const [type, reason, message] = event;
    // A failure that retrying cannot cure ended it: say which, with the field and the cause.
    if (to === VmiPhase.Failed && syncFailure?.fatalReason !== undefined) {
      await this.#o.recorder.record(write.vmi, type, reason, `The VirtualMachineInstance failed (${syncFailure.fatalReason}): ${syncFailure.message}`);
      return;
    }
    const why = write.after.reason === undefined ? undefined : GONE_MESSAGES[write.after.reason];
    await this.#o.recorder.record(write.vmi, type, reason, why === undefined ? message : `${message} ${why}`);
  }
}

/** The handler's phase of each hotplugged volume it acted on, over the controller's entries. */
function withHotplugStates(status: VmiStatus, states: ReadonlyMap<string, HotplugMountState> | undefined): VmiStatus {
  if (states === undefined || states.size === 0 || status.volumeStatus === undefined) return status;
  return { ...status, volumeStatus: status.volumeStatus.map((s) => {
    const state = states.get(s.name);
    return state === undefined ? s : { ...s, phase: state.phase, reason: state.reason, message: state.message };
  }) };
}

/** A migration to this node that ended before the hand-over, or whose VMI is being deleted. */
function targetDone(vmi: VirtualMachineInstance): boolean {
  return vmi.status?.migrationState?.failed === true || vmi.metadata.deletionTimestamp != null;
}

/** Enough of a VMI to address its launcher and its Events when nothing else is known. */
function placeholder(key: string, uid: string): VirtualMachineInstance {
  const { namespace, name } = splitObjectKey(key);
  return { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', metadata: { namespace, name, uid }, spec: { domain: { devices: {} } } };
}
