// The acting half of both handler sides of a live migration, called by the VMI reconciler:
// the target prepares its launcher (pod network first, never Sync) and opens the endpoint; the
// source opens its end of the proxy, calls Migrate, cancels on request and reports the outcome.
// Each side keeps its open endpoint per VMI UID and closes it when the migration ends, when
// the VMI's local state is released, and at shutdown. Every status write goes through
// writeStatus with the side's own fields only (migration-fields.ts).

import { decodeVmi, type VirtualMachineInstance, type VmiStatus } from '@podvirt/api';
import type { Logger } from 'pino';
import { isHandlerError } from '../handler-error.js';
import type { VmiApi } from '../kube/vmi-api.js';
import type { LauncherObservation } from '../launcher/launcher-registry.js';
import { LauncherState } from '../launcher/launcher-state.js';
import type { PodNetworkPhase } from '../network/pod-network-phase.js';
import { writeStatus } from '../kube/status-writer.js';
import { decideSource, progressOf, type MigrateCall } from './decide-source.js';
import { migrationEnded } from './migration-role.js';
import { decideTarget } from './decide-target.js';
import type { MigrationEndpoints, SourceEndpoint, TargetEndpoint } from './migration-endpoints.js';
import { withSourceFields, withTargetFields, type SourceOutcome, type TargetFields } from './migration-fields.js';
import type { MigrationRole } from './migration-role.js';
import type { MigrationSettings } from './migration-settings.js';
import { HandlerError } from '../handler-error.js';

// How long a source whose launcher ended mid-migration waits for the target to report the guest
// before it calls the migration failed: the target's launcher reports within a few seconds of
// the switch; a minute covers a loaded node without leaving the VMI undecided.
export const SOURCE_GONE_GRACE_MS = 60_000;
const LOOK_AGAIN_MS = 5_000;

export interface MigrationCoordinatorOptions {
  readonly api: VmiApi;
  readonly endpoints: MigrationEndpoints;
  readonly settings: MigrationSettings;
  readonly now: () => number;
  readonly network?: PodNetworkPhase;
}

export interface PassContext {
  readonly uid: string;
  readonly vmi: VirtualMachineInstance;
  readonly observation: LauncherObservation;
  readonly log: Logger;
  readonly signal: AbortSignal;
}

export interface SourceStep {
  /** Keep the ordinary Sync and the phase computation away from the domain. */
  readonly hold: boolean;
  readonly why: string;
  /** What to add to the status; undefined when nothing of this migration is known yet. */
  readonly outcome?: SourceOutcome;
  readonly requeueAfterMs?: number;
  /** Migrate failed in a way retrying can cure (the handler stops): retry the key. */
  readonly error?: unknown;
}

interface Open<E> {
  readonly migrationUid: string;
  readonly endpoint: E;
}

interface SourceState {
  readonly migrationUid: string;
  endpoint?: SourceEndpoint;
  call?: MigrateCall;
}

export class MigrationCoordinator {
  readonly #o: MigrationCoordinatorOptions;
  readonly #targets = new Map<string, Open<TargetEndpoint>>();
  readonly #sources = new Map<string, SourceState>();
  /** When a source first saw its launcher gone during a started migration. */
  readonly #goneSince = new Map<string, number>();
  /** VMI UID → the ended migration whose leftover source sockets were swept. */
  readonly #swept = new Map<string, string>();

  constructor(o: MigrationCoordinatorOptions) {
    this.#o = o;
  }

  /** Whether this handler holds anything of a migration of `uid`. */
  involved(uid: string): boolean {
    return this.#targets.has(uid) || this.#sources.has(uid);
  }

  /** One target pass: decide, act, write the target's fields. */
  async target(ctx: PassContext): Promise<{ requeueAfterMs?: number }> {
    const ms = ctx.vmi.status?.migrationState ?? {};
    const migrationUid = ms.migrationUid ?? '';
    const open = this.#targets.get(ctx.uid);
    if (open !== undefined && open.migrationUid !== migrationUid) await this.closeTarget(ctx.uid);
    const endpoint = this.#targets.get(ctx.uid)?.endpoint;
    const action = decideTarget({ migrationState: ms, launcher: ctx.observation.state, domain: ctx.observation.domain, endpointOpen: endpoint !== undefined });
    ctx.log.debug({ action }, 'migration target decided');
    const fields: { -readonly [K in keyof TargetFields]: TargetFields[K] } = {};
    let requeueAfterMs: number | undefined;
    switch (action.type) {
      case 'prepare': {
        const opened = await this.#prepare(ctx, migrationUid);
        fields.address = opened.address;
        fields.ports = opened.ports;
        break;
      }
      case 'detected':
        ctx.log.info('the migrated guest runs here');
        fields.detectedAtMs = this.#o.now();
        break;
      case 'close':
        if (endpoint !== undefined) ctx.log.info({ why: action.why }, 'closing the migration target endpoint');
        await this.closeTarget(ctx.uid);
        break;
      case 'nothing':
        requeueAfterMs = action.requeueAfterMs;
        break;
    }
    const current = this.#targets.get(ctx.uid)?.endpoint;
    if (current !== undefined) {
      fields.address = current.address;
      fields.ports = current.ports;
    }
    await writeStatus(this.#o.api, ctx.vmi, (v) => withTargetFields(v.status ?? {}, migrationUid, fields), ctx.signal);
    return requeueAfterMs === undefined ? {} : { requeueAfterMs };
  }

  async #prepare(ctx: PassContext, migrationUid: string): Promise<TargetEndpoint> {
    const conn = ctx.observation.connection;
    if (conn === undefined) throw new HandlerError('HANDLER_ERR_NO_LAUNCHER_SOCKET', 'no launcher connection for the migration target');
    // The tap, bridge and NAT must be there before the incoming domain is defined on the tap.
    await this.#o.network?.ensure(decodeVmi(ctx.vmi), ctx.signal, conn.client.socketPath);
    // The answer is the XML this pod would run; the source sends its own (same in-pod paths).
    await conn.client.prepareMigrationTarget(Buffer.from(JSON.stringify(ctx.vmi)), ctx.signal);
    const endpoint = await this.#o.endpoints.openTarget({ uid: ctx.uid, launcherSocket: conn.client.socketPath, log: ctx.log });
    this.#targets.set(ctx.uid, { migrationUid, endpoint });
    ctx.log.info({ address: endpoint.address, ports: endpoint.ports }, 'migration target ready');
    return endpoint;
  }

  /** One source step, before the ordinary decision: may start or cancel the migration. */
  async source(ctx: PassContext): Promise<SourceStep> {
    const ms = ctx.vmi.status?.migrationState ?? {};
    const migrationUid = ms.migrationUid ?? '';
    let state = this.#sources.get(ctx.uid);
    if (state !== undefined && state.migrationUid !== migrationUid) {
      await this.closeSource(ctx.uid);
      state = undefined;
    }
    const { domain, state: launcher } = ctx.observation;
    const progress = progressOf(ms, domain, state?.call);
    const deleting = ctx.vmi.metadata.deletionTimestamp != null;
    const action = decideSource({ migrationState: ms, launcher, domain, progress, migrateCalled: state?.call !== undefined, deleting });
    ctx.log.debug({ action, progress: progress?.phase }, 'migration source decided');
    switch (action.type) {
      case 'migrate':
        return this.#migrate(ctx, migrationUid);
      case 'cancel':
        ctx.log.info('cancelling the migration on request');
        await this.#client(ctx).cancelMigration(Buffer.from(JSON.stringify(ctx.vmi)), ctx.signal);
        return { hold: true, why: 'migration cancelled', ...(progress === undefined ? {} : { outcome: { progress } }) };
      case 'abortUnstarted':
        return { hold: false, why: 'aborted before it started', outcome: { ended: { atMs: this.#o.now(), completed: false, reason: 'the migration was aborted before it started', abortStatus: 'Succeeded' } } };
      case 'none':
        break;
    }
    if (progress !== undefined && progress.phase !== 'Running') await this.closeSource(ctx.uid);
    if ((progress !== undefined && progress.phase !== 'Running') || migrationEnded(ms)) await this.#sweep(ctx, migrationUid);
    if (!action.hold) {
      this.#goneSince.delete(ctx.uid);
      return { hold: false, why: action.why, ...(progress === undefined ? {} : { outcome: { progress } }) };
    }
    const gone = launcher === LauncherState.Unresponsive && progress?.phase !== 'Succeeded' && ms.completed !== true;
    if (!gone) return { hold: true, why: action.why, ...(progress === undefined ? {} : { outcome: { progress } }) };
    return this.#sourceLauncherGone(ctx, progress);
  }

  /**
   * The source launcher ended while the migration was not known to have succeeded: the guest
   * runs at the target if the target saw it there; otherwise, after the grace, it is lost here.
   */
  #sourceLauncherGone(ctx: PassContext, progress: SourceOutcome['progress']): SourceStep {
    const ms = ctx.vmi.status?.migrationState ?? {};
    const now = this.#o.now();
    if (ms.targetNodeDomainDetected === true) {
      this.#goneSince.delete(ctx.uid);
      return { hold: true, why: 'the target runs the guest', outcome: { ended: { atMs: now, completed: true } } };
    }
    const since = this.#goneSince.get(ctx.uid) ?? now;
    this.#goneSince.set(ctx.uid, since);
    if (now - since < SOURCE_GONE_GRACE_MS) {
      return { hold: true, why: 'source launcher gone, waiting for the target', requeueAfterMs: LOOK_AGAIN_MS, ...(progress === undefined ? {} : { outcome: { progress } }) };
    }
    this.#goneSince.delete(ctx.uid);
    ctx.log.warn('the source launcher ended during the migration and the target never reported the guest');
    return { hold: false, why: 'source launcher gone', outcome: { ended: { atMs: now, completed: false, reason: 'the source launcher ended during the migration' } } };
  }

  async #migrate(ctx: PassContext, migrationUid: string): Promise<SourceStep> {
    const ms = ctx.vmi.status?.migrationState ?? {};
    const conn = this.#client(ctx);
    const state: SourceState = { migrationUid };
    this.#sources.set(ctx.uid, state);
    const s = this.#o.settings;
    try {
      const endpoint = await this.#o.endpoints.openSource({
        uid: ctx.uid, launcherSocket: conn.socketPath, address: ms.targetNodeAddress ?? '', ports: ms.targetDirectMigrationNodePorts ?? {}, log: ctx.log,
      });
      state.endpoint = endpoint;
      const previous = ctx.observation.domain?.migration;
      state.call = { previousStartMs: previous === undefined || previous.phase === '' ? undefined : Number(previous.startedAtMs) };
      ctx.log.info({ destination: endpoint.destinationUri, method: ctx.vmi.status?.migrationMethod }, 'starting the migration');
      await conn.migrate({
        vmiJson: Buffer.from(JSON.stringify(ctx.vmi)),
        destinationUri: endpoint.destinationUri,
        migrateUri: endpoint.migrateUri,
        disksUri: endpoint.disksUri,
        // Every pod sees its files at the same paths, so the source's own XML runs at the target.
        destinationXml: '',
        blockMigration: ctx.vmi.status?.migrationMethod === 'BlockMigration',
        bandwidthMibPerSecond: s.bandwidthMiBs,
        progressTimeoutSeconds: s.progressTimeoutSeconds,
        completionTimeoutPerGibSeconds: s.completionTimeoutPerGibSeconds,
        allowAutoConverge: s.allowAutoConverge,
        allowPostCopy: false,
      }, ctx.signal);
      return { hold: true, why: 'migration started' };
    } catch (err) {
      await this.closeSource(ctx.uid);
      if (isHandlerError(err, 'HANDLER_ERR_ABORTED')) throw err;
      ctx.log.warn({ err }, 'the migration could not start');
      const reason = `the migration could not start: ${err instanceof Error ? err.message : String(err)}`;
      return { hold: false, why: 'migrate failed', outcome: { ended: { atMs: this.#o.now(), completed: false, reason } } };
    }
  }

  /** Once per ended migration: an endpoint this process never opened may be a killed predecessor's. */
  async #sweep(ctx: PassContext, migrationUid: string): Promise<void> {
    const conn = ctx.observation.connection;
    if (conn === undefined || this.#swept.get(ctx.uid) === migrationUid || this.#sources.get(ctx.uid)?.endpoint !== undefined) return;
    this.#swept.set(ctx.uid, migrationUid);
    await this.#o.endpoints.sweepSource({ uid: ctx.uid, launcherSocket: conn.client.socketPath, log: ctx.log });
  }

  #client(ctx: PassContext) {
    const conn = ctx.observation.connection;
    if (conn === undefined) throw new HandlerError('HANDLER_ERR_NO_LAUNCHER_SOCKET', 'no launcher connection for the migration source');
    return conn.client;
  }

  /** The source writes its fields on top of whatever the ordinary computation made. */
  sourceStatus(status: VmiStatus, migrationUid: string, outcome: SourceOutcome | undefined): VmiStatus {
    return outcome === undefined ? status : withSourceFields(status, migrationUid, outcome);
  }

  /** Closes what belongs to a side this node does not play for the VMI now. */
  async settle(uid: string, role: MigrationRole): Promise<void> {
    if (role !== 'target' && this.#targets.has(uid)) await this.closeTarget(uid);
    if (role !== 'source' && this.#sources.has(uid)) await this.closeSource(uid);
  }

  async closeTarget(uid: string): Promise<void> {
    const open = this.#targets.get(uid);
    this.#targets.delete(uid);
    await open?.endpoint.close();
  }

  async closeSource(uid: string): Promise<void> {
    const state = this.#sources.get(uid);
    const endpoint = state?.endpoint;
    if (state !== undefined) delete state.endpoint;
    await endpoint?.close();
  }

  /** The VMI's local state is released: nothing of its migrations stays open. */
  async release(uid: string): Promise<void> {
    await Promise.all([this.closeTarget(uid), this.closeSource(uid)]);
    this.#sources.delete(uid);
    this.#goneSince.delete(uid);
    this.#swept.delete(uid);
  }

  /** Closes every endpoint (handler shutdown). Idempotent. */
  async close(): Promise<void> {
    const uids = new Set([...this.#targets.keys(), ...this.#sources.keys()]);
    await Promise.all([...uids].map((uid) => this.release(uid)));
  }
}
