// virt-handler's VMI controller, wired: the node-filtered VMI informer and the launchers' domain
// streams feed one keyed work queue; N workers reconcile keys; a periodic resync re-enqueues
// everything as a safety net. close() stops taking work, lets in-flight reconciles finish
// within a bound, and closes the launcher streams — the VMs keep running.

import { MIGRATION_TARGET_NODE_LABEL, NODE_NAME_LABEL, vmiReference, type VirtualMachineInstance } from '@podvirt/api';
import type { Logger } from 'pino';
import type { GhostRecord, LauncherRecords } from './ghost-records/ghost-record.js';
import type { VmiApi } from './kube/vmi-api.js';
import { VmiInformer } from './kube/vmi-informer.js';
import type { CallDeadlines, CallObserver } from '@podvirt/proto';
import { LauncherRegistry } from './launcher/launcher-registry.js';
import { EventRecorder, WorkQueue, type EventSink, type ItemBackoffOptions } from '@podvirt/kube-runtime';
import type { PodNetworkPhase } from './network/pod-network-phase.js';
import { VmiReconciler } from './reconcile/vmi-reconciler.js';
import { BackoffHold } from './reconcile/backoff-hold.js';
import type { IoErrorRetryOptions } from './reconcile/io-error-retry.js';
import { objectKey } from '@podvirt/kube-runtime';
import { MigrationCoordinator } from './live-migration/migration-coordinator.js';
import type { MigrationEndpoints } from './live-migration/migration-endpoints.js';
import type { MigrationSettings } from './live-migration/migration-settings.js';
import type { InformerEventType } from './kube/vmi-informer.js';
import { HotplugMounts } from './hotplug/hotplug-mounts.js';

/** The component virt-handler's Events name as their source, as KubeVirt's do. */
export const EVENT_SOURCE_COMPONENT = 'virt-handler';

export interface HandlerControllerOptions {
  readonly nodeName: string;
  readonly podsDir: string;
  readonly vmiApi: VmiApi;
  readonly eventApi: EventSink;
  readonly log: Logger;
  readonly workers: number;
  readonly watchdogMs: number;
  readonly resyncPeriodMs: number;
  readonly now?: () => number;
  readonly initTimeoutMs?: number;
  readonly launcherTimeouts?: Partial<CallDeadlines>;
  readonly backoff?: ItemBackoffOptions;
  readonly reconnectBaseMs?: number;
  /** Ghost records, already loaded: their VMIs are reconciled after the first list. */
  readonly records?: LauncherRecords & { list(): GhostRecord[] };
  /** Told how long each reconcile took and whether it failed (metrics). */
  readonly observeReconcile?: (seconds: number, ok: boolean) => void;
  /** Told about every launcher call (metrics). */
  readonly observeLauncherCall?: CallObserver;
  /** The privileged pod network phase; main.ts passes the real one. */
  readonly network?: PodNetworkPhase;
  /** Pacing of resumes after I/O-error pauses; KubeVirt's (10 s doubling to 3 min) by default. */
  readonly ioErrorRetry?: IoErrorRetryOptions;
  /** Live migration: the proxy's endpoints and the source's settings; absent: migrations are not acted on. */
  readonly migrations?: { readonly endpoints: MigrationEndpoints; readonly settings: MigrationSettings };
}

export class HandlerController {
  readonly queue: WorkQueue;
  readonly informer: VmiInformer;
  /** The VMIs migrating to this node (label kubevirt.io/migrationTargetNodeName), when migrations are on. */
  readonly targetInformer: VmiInformer | undefined;
  readonly migrations: MigrationCoordinator | undefined;
  readonly registry: LauncherRegistry;
  readonly recorder: EventRecorder<VirtualMachineInstance>;
  readonly reconciler: VmiReconciler;
  readonly #o: HandlerControllerOptions;
  /** Aborts reconciles still running when the close() bound runs out. */
  readonly #inFlight = new AbortController();
  readonly #workers: Array<Promise<void>> = [];
  /** Reconciles that gave their worker back while a launcher starts its domain. */
  readonly #parked = new Set<Promise<void>>();
  readonly #backoffs: BackoffHold;
  readonly #reconciling = new Set<string>();
  readonly #deferred = new Map<string, VirtualMachineInstance>();
  /** Keys a node API call is answering for (holders per key), and those changed meanwhile. */
  readonly #answering = new Map<string, number>();
  readonly #changedWhileAnswering = new Set<string>();
  #resync: NodeJS.Timeout | undefined;
  #closing: Promise<void> | undefined;

  constructor(options: HandlerControllerOptions) {
    this.#o = options;
    const now = options.now ?? Date.now;
    const log = options.log;
    this.queue = new WorkQueue(options.backoff);
    this.#backoffs = new BackoffHold(now);
    this.recorder = new EventRecorder({
      sink: options.eventApi,
      reference: vmiReference,
      component: EVENT_SOURCE_COMPONENT,
      host: options.nodeName,
      instance: options.nodeName,
      log: log.child({ subcomponent: 'events' }),
      now,
    });
    this.registry = new LauncherRegistry({
      nodeName: options.nodeName,
      podsDir: options.podsDir,
      log: log.child({ subcomponent: 'launchers' }),
      now,
      watchdogMs: options.watchdogMs,
      onChange: (key) => this.#domainChanged(key),
      onNotice: (key, uid, notice) => this.reconciler.relay(key, uid, notice),
      ...(options.initTimeoutMs === undefined ? {} : { initTimeoutMs: options.initTimeoutMs }),
      ...(options.launcherTimeouts === undefined ? {} : { timeouts: options.launcherTimeouts }),
      ...(options.reconnectBaseMs === undefined ? {} : { reconnectBaseMs: options.reconnectBaseMs }),
      ...(options.records === undefined ? {} : { records: options.records }),
      ...(options.observeLauncherCall === undefined ? {} : { observeCall: options.observeLauncherCall }),
    });
    const onEvent = (type: InformerEventType, vmi: VirtualMachineInstance): void => {
      const key = objectKey(vmi);
      if (type === 'DELETED') this.reconciler.remember(vmi, key);
      else if (this.#reconciling.has(key)) {
        // Its own status write comes back while the key is processed: judged once it is done.
        this.#deferred.set(key, vmi);
        return;
      } else if (this.#backoffs.holds(key, vmi)) return;
      this.queue.add(key);
    };
    this.informer = new VmiInformer({
      api: options.vmiApi,
      labelSelector: `${NODE_NAME_LABEL}=${options.nodeName}`,
      resyncPeriodMs: options.resyncPeriodMs,
      log: log.child({ subcomponent: 'informer' }),
      onEvent,
    });
    const m = options.migrations;
    this.targetInformer = m === undefined ? undefined : new VmiInformer({
      api: options.vmiApi,
      labelSelector: `${MIGRATION_TARGET_NODE_LABEL}=${options.nodeName}`,
      resyncPeriodMs: options.resyncPeriodMs,
      log: log.child({ subcomponent: 'migration-target-informer' }),
      onEvent,
    });
    this.migrations = m === undefined ? undefined : new MigrationCoordinator({
      api: options.vmiApi, endpoints: m.endpoints, settings: m.settings, now,
      ...(options.network === undefined ? {} : { network: options.network }),
    });
    const target = this.targetInformer;
    this.reconciler = new VmiReconciler({
      nodeName: options.nodeName,
      api: options.vmiApi,
      // The node's own VMIs first: at the hand-over the VMI is in both for a moment.
      source: target === undefined ? this.informer : { get: (key) => this.informer.get(key) ?? target.get(key) },
      ...(this.migrations === undefined ? {} : { migrations: this.migrations }),
      registry: this.registry,
      recorder: this.recorder,
      log,
      now,
      ...(options.network === undefined ? {} : { network: options.network }),
      ...(options.ioErrorRetry === undefined ? {} : { ioErrorRetry: options.ioErrorRetry }),
      hotplug: new HotplugMounts({ podsDir: options.podsDir, log: log.child({ subcomponent: 'hotplug' }) }),
    });
  }

  /**
   * A node API call (pause, unpause …) is about to answer for `key`: a change of its domain
   * the launcher reports meanwhile is reconciled (the status write) once the answer is sent,
   * not beside it on the same event loop. The caller's answer waits for the launcher alone;
   * the status follows a moment later. The returned release is called once the call is done.
   */
  holdForAnswer(key: string): () => void {
    this.#answering.set(key, (this.#answering.get(key) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      // After the answer's write: the call's promise chain runs in microtasks, this after them.
      setImmediate(() => {
        const left = (this.#answering.get(key) ?? 1) - 1;
        if (left > 0) {
          this.#answering.set(key, left);
          return;
        }
        this.#answering.delete(key);
        if (this.#changedWhileAnswering.delete(key)) this.queue.add(key);
      });
    };
  }

  #domainChanged(key: string): void {
    if (this.#answering.has(key)) this.#changedWhileAnswering.add(key);
    else this.queue.add(key);
  }

  /**
   * Starts the informer, waits for its first list, then starts the workers. Every ghost record
   * is enqueued too, as KubeVirt enqueues domains without a VMI: a VMI deleted while the handler
   * was down is only known from its record, and its launcher still has to be shut down.
   * Resolves false when `signal` aborted first.
   */
  async start(signal: AbortSignal): Promise<boolean> {
    this.informer.start();
    this.targetInformer?.start();
    if (!(await this.informer.waitForSync(signal))) return false;
    if (this.targetInformer !== undefined && !(await this.targetInformer.waitForSync(signal))) return false;
    for (const record of this.#o.records?.list() ?? []) this.queue.add(`${record.namespace}/${record.name}`);
    for (let i = 0; i < this.#o.workers; i++) this.#workers.push(this.#work());
    this.#resync = setInterval(() => void this.#resyncDomains(), this.#o.resyncPeriodMs);
    this.#resync.unref();
    this.#o.log.info({ workers: this.#o.workers, records: this.#o.records?.list().length ?? 0 }, 'handler controller started');
    return true;
  }

  /** Graceful, bounded and idempotent; launchers and their VMs are left running. */
  close(graceMs = 10_000): Promise<void> {
    this.#closing ??= this.#close(graceMs);
    return this.#closing;
  }

  async #close(graceMs: number): Promise<void> {
    clearInterval(this.#resync);
    this.queue.shutDown();
    await Promise.all([this.informer.close(), this.targetInformer?.close()]);
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), graceMs);
    });
    const all = (): Promise<unknown> => Promise.all(this.#workers).then(() => Promise.all([...this.#parked]));
    const finished = await Promise.race([all().then(() => 'done' as const), bound]);
    clearTimeout(timer);
    if (finished === 'timeout') {
      this.#o.log.warn({ graceMs }, 'reconciles still running at shutdown, aborting them');
      this.#inFlight.abort();
      await all();
    }
    await this.registry.close();
    await this.migrations?.close();
    await this.recorder.close();
    this.#o.log.info('handler controller stopped');
  }

  async #work(): Promise<void> {
    for (;;) {
      const key = await this.queue.get();
      if (key === undefined) return;
      // A reconcile that parks (waiting on a launcher's domain start) frees its worker and
      // finishes on its own; its key stays in the queue's processing set until then.
      let park: () => void = () => undefined;
      const parked = new Promise<'parked'>((resolve) => {
        park = () => resolve('parked');
      });
      const run = this.#process(key, park);
      if ((await Promise.race([run.then(() => 'done' as const), parked])) === 'parked') {
        this.#parked.add(run);
        void run.finally(() => this.#parked.delete(run));
      }
    }
  }

  async #process(key: string, park: () => void): Promise<void> {
    const started = performance.now();
    this.#reconciling.add(key);
    try {
      const result = await this.reconciler.reconcile(key, this.#inFlight.signal, park);
      this.#o.observeReconcile?.((performance.now() - started) / 1000, true);
      this.queue.forget(key);
      this.#backoffs.release(key);
      if (result.requeueAfterMs !== undefined) this.queue.addAfter(key, result.requeueAfterMs);
    } catch (err) {
      this.#o.observeReconcile?.((performance.now() - started) / 1000, false);
      if (!this.#inFlight.signal.aborted) {
        const retryInMs = this.queue.addRateLimited(key);
        this.#backoffs.hold(key, this.informer.get(key), retryInMs);
        this.#o.log.warn({ err, key, retryInMs }, 'reconcile failed, requeueing');
      }
    } finally {
      this.#reconciling.delete(key);
      const updated = this.#deferred.get(key);
      this.#deferred.delete(key);
      if (updated !== undefined && !this.#backoffs.holds(key, updated)) this.queue.add(key);
      this.queue.done(key);
    }
  }

  /** The safety net under the domain streams: refresh every launcher's domain and requeue. */
  async #resyncDomains(): Promise<void> {
    await this.registry.refresh();
    for (const uid of this.registry.cache.uids()) {
      const entry = this.registry.cache.get(uid);
      if (entry !== undefined) this.queue.add(entry.key);
    }
  }
}
