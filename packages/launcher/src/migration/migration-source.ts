// The source half of a live migration: this launcher's daemon migrates the domain peer-to-peer
// to the destination daemon (reached through a socket the handlers proxy), pre-copy only. A
// watchdog polls the job statistics, publishes progress (data left, passes over memory) on
// WatchDomain and aborts on the progress and completion timeouts; cancel() aborts on request.
// It uses a connection of its own, so the long migrate call never holds up the domain's.
import {
  LibvirtClient, MigrateFlags, domainAbortJob, domainJobStats, isOperationInvalid, jobStat, migrateDomain,
  type DomainRef, type JobStats,
} from '@podvirt/libvirt';
import type { cmd } from '@podvirt/proto';
import type { Logger } from 'pino';
import { LauncherError } from '../errors.js';
import { progressCounters } from './progress-counters.js';
import { judgeProgress, startWatchdog, type WatchdogLimits, type WatchdogState } from './migration-watchdog.js';

export interface MigrationPlan {
  readonly destinationUri: string;
  readonly migrateUri?: string;
  readonly disksUri?: string;
  readonly destinationXml?: string;
  readonly blockMigration: boolean;
  /** 0: unlimited. */
  readonly bandwidthMiBs: number;
  readonly autoConverge: boolean;
  readonly limits: WatchdogLimits;
}

export interface MigrationSourceOptions {
  readonly socketPath: string;
  readonly domain: string;
  readonly log: Logger;
  /** Makes the progress part of the published domain. */
  readonly publish: (progress: cmd.MigrationProgress) => void;
  readonly connect?: (socketPath: string) => Promise<LibvirtClient>;
  readonly now?: () => number;
  /** How often the job statistics are read (1 s: KubeVirt's monitor interval is 400 ms, TCG is slower). */
  readonly pollMs?: number;
}

interface Active {
  readonly client: LibvirtClient;
  readonly dom: DomainRef;
  progress: cmd.MigrationProgress;
  watchdog: WatchdogState;
  abortReason?: string;
  completed?: JobStats;
  readonly done: Promise<void>;
}

const VIR_DOMAIN_JOB_STATS_COMPLETED = 1;

export class MigrationSource {
  readonly #o: MigrationSourceOptions;
  #active: Active | undefined;

  constructor(o: MigrationSourceOptions) {
    this.#o = o;
  }

  get #now(): number {
    return (this.#o.now ?? Date.now)();
  }

  /** Resolves once the migration runs; its end is published, not returned. */
  async start(plan: MigrationPlan): Promise<void> {
    if (this.#active !== undefined) throw new LauncherError('LAUNCHER_ERR_WRONG_STATE', 'a migration of this domain is already running');
    const client = await (this.#o.connect ?? connectDaemon)(this.#o.socketPath);
    let dom: DomainRef;
    try {
      dom = await client.domainLookupByName(this.#o.domain);
      const { state } = await client.domainGetState(dom);
      if (state !== 'RUNNING' && state !== 'PAUSED') throw new LauncherError('LAUNCHER_ERR_WRONG_STATE', `cannot migrate a domain that is ${state.toLowerCase()}`);
      // The finished job's statistics (downtime above all) come with this event: once the guest
      // has left, the source domain is undefined and its job can no longer be asked about.
      await client.registerDomainEvent('JOB_COMPLETED', { domain: dom });
    } catch (err) {
      await client.close().catch(() => undefined);
      throw err;
    }
    const now = this.#now;
    const progress: cmd.MigrationProgress = {
      phase: 'Running', startedAtMs: now, endedAtMs: 0, dataTotal: 0, dataProcessed: 0, dataRemaining: 0, iterations: 0,
      memoryDirtyRateBps: 0, memoryTransferBps: 0, downtimeMs: 0, mode: 'PreCopy', abortRequested: false, abortStatus: '', failureReason: '',
    };
    const flags = MigrateFlags.LIVE | MigrateFlags.PERSIST_DEST | MigrateFlags.UNDEFINE_SOURCE
      | (plan.blockMigration ? MigrateFlags.NON_SHARED_INC : 0) | (plan.autoConverge ? MigrateFlags.AUTO_CONVERGE : 0);
    const perform = migrateDomain(client, dom, {
      destinationUri: plan.destinationUri, flags,
      ...(plan.migrateUri === undefined ? {} : { migrateUri: plan.migrateUri }),
      ...(plan.disksUri === undefined ? {} : { disksUri: plan.disksUri }),
      ...(plan.destinationXml === undefined ? {} : { destinationXml: plan.destinationXml, persistentXml: plan.destinationXml }),
      ...(plan.bandwidthMiBs > 0 ? { bandwidthMiBs: plan.bandwidthMiBs } : {}),
    });
    const active: Active = { client, dom, progress, watchdog: startWatchdog(now), done: Promise.resolve() };
    client.on('event', (e) => {
      if (e.kind === 'JOB_COMPLETED') active.completed = { type: 'COMPLETED', stats: e.stats };
    });
    this.#active = active;
    this.#o.log.info({ destination: plan.destinationUri, block: plan.blockMigration, bandwidthMiBs: plan.bandwidthMiBs }, 'migration started');
    this.#o.publish(progress);
    const timer = setInterval(() => void this.#poll(active, plan.limits), this.#o.pollMs ?? 1000);
    timer.unref();
    (active as { done: Promise<void> }).done = perform.then(
      () => this.#finish(active, undefined),
      (err: unknown) => this.#finish(active, err),
    ).finally(() => {
      clearInterval(timer);
      if (this.#active === active) this.#active = undefined;
      return client.close().catch(() => undefined);
    });
  }

  /** Aborts the running migration; nothing to do when none runs. */
  async cancel(reason = 'the migration was cancelled'): Promise<void> {
    const active = this.#active;
    if (active === undefined) return;
    await this.#abort(active, reason);
  }

  /** Resolves once no migration runs (its outcome published). */
  async settled(): Promise<void> {
    await this.#active?.done;
  }

  /** Aborts what runs and waits for its end. Idempotent. */
  async close(): Promise<void> {
    const active = this.#active;
    if (active === undefined) return;
    await this.#abort(active, 'the launcher is stopping').catch(() => undefined);
    await active.done;
  }

  async #abort(active: Active, reason: string): Promise<void> {
    if (active.abortReason !== undefined) return;
    active.abortReason = reason;
    active.progress = { ...active.progress, abortRequested: true, abortStatus: 'Aborting' };
    this.#o.publish(active.progress);
    this.#o.log.warn({ reason }, 'aborting migration');
    await domainAbortJob(active.client, active.dom).catch((err: unknown) => {
      // The job ended between the decision and the call: its end is reported as it is.
      if (!isOperationInvalid(err)) throw err;
    });
  }

  async #poll(active: Active, limits: WatchdogLimits): Promise<void> {
    if (this.#active !== active || active.abortReason !== undefined) return;
    let stats: JobStats;
    try {
      stats = await domainJobStats(active.client, active.dom);
    } catch (err) {
      this.#o.log.debug({ err }, 'migration job statistics unreadable');
      return;
    }
    if (stats.type !== 'UNBOUNDED' && stats.type !== 'BOUNDED') return;
    active.progress = { ...active.progress, ...progressCounters(stats) };
    this.#o.publish(active.progress);
    const verdict = judgeProgress(limits, active.watchdog, jobStat(stats, 'data_remaining'), this.#now);
    if (verdict.kind === 'continue') active.watchdog = verdict.state;
    else await this.#abort(active, verdict.reason).catch((err: unknown) => this.#o.log.warn({ err }, 'migration abort failed'));
  }

  async #finish(active: Active, err: unknown): Promise<void> {
    const ended = this.#now;
    if (err === undefined) {
      const done = active.completed ?? await domainJobStats(active.client, active.dom, VIR_DOMAIN_JOB_STATS_COMPLETED).catch(() => undefined);
      active.progress = {
        ...active.progress, ...(done === undefined ? {} : progressCounters(done)), phase: 'Succeeded', endedAtMs: ended,
        downtimeMs: done === undefined ? 0 : (jobStat(done, 'downtime') ?? 0),
        ...(active.abortReason === undefined ? {} : { abortStatus: 'Failed' }),
      };
      this.#o.log.info({ downtimeMs: active.progress.downtimeMs, iterations: active.progress.iterations }, 'migration completed');
    } else {
      const reason = active.abortReason ?? (err instanceof Error ? err.message : String(err));
      active.progress = {
        ...active.progress, phase: 'Failed', endedAtMs: ended, failureReason: reason,
        ...(active.abortReason === undefined ? {} : { abortStatus: 'Succeeded' }),
      };
      this.#o.log.warn({ err, reason }, 'migration failed');
    }
    this.#o.publish(active.progress);
  }
}

function connectDaemon(socketPath: string): Promise<LibvirtClient> {
  return LibvirtClient.connect({ socketPath, uri: 'qemu:///system', timeoutMs: 15_000 });
}
