// Everything podvirt-handler runs, wired in start-up order and torn down in reverse, without
// touching process.* (main.ts owns flags and signals). Start: node unschedulable, ghost records
// loaded, /healthz + /metrics up, node API listening, informer synced and workers running, then
// the heartbeat makes the node schedulable. close(): not ready, node API and heartbeat stopped
// (node unschedulable again), in-flight reconciles finished within the bound, launcher streams
// closed — the VMs keep running.

import { join } from 'node:path';
import { HttpEndpoints, metricsRoute, type EndpointRoute, type EventSink } from '@podvirt/kube-runtime';
import { KUBELET_SOCKET_NAME } from '@podvirt/proto';
import type { Logger } from 'pino';
import type { HandlerArgs } from './handler-args.js';
import { HandlerController } from './handler-controller.js';
import { DevicePlugins } from './device-plugins/device-plugins.js';
import { kubeletRegistrar, type KubeletRegistrar } from './device-plugins/kubelet-registration.js';
import { GhostRecordStore } from './ghost-records/ghost-record-store.js';
import { healthRoutes } from './health/health-routes.js';
import { Readiness } from './health/readiness.js';
import { Heartbeat } from './heartbeat/heartbeat.js';
import type { NodePatcher } from './heartbeat/node-patcher.js';
import type { VmiApi } from './kube/vmi-api.js';
import type { DomainStatsTarget } from './metrics/domain-stats-collector.js';
import { HandlerMetrics } from './metrics/handler-metrics.js';
import { GuestStreams } from './guest-stream/guest-streams.js';
import { NodeApiServer } from './node-api/node-api-server.js';
import { nodeApiService } from './node-api/node-api-service.js';
import { NodeOperations } from './node-api/node-operations.js';
import type { PodNetworkPhase } from './network/pod-network-phase.js';
import type { MigrationEndpoints } from './live-migration/migration-endpoints.js';
import { VmiResolver } from './node-api/vmi-resolver.js';
import { IO_ERROR_RETRY } from './reconcile/io-error-retry.js';

export type RuntimeArgs = Omit<HandlerArgs, 'kubeconfig'>;

export interface HandlerRuntimeOptions {
  readonly args: RuntimeArgs;
  readonly vmiApi: VmiApi;
  readonly eventApi: EventSink;
  readonly nodePatcher: NodePatcher;
  readonly log: Logger;
  /** process_* metrics; main turns them on. */
  readonly processMetrics?: boolean;
  /** The kubelet's Registration service (default: kubelet.sock in the device-plugins directory). */
  readonly registrar?: KubeletRegistrar;
  /** The privileged pod network phase (main passes the real one; absent: no NIC is wired). */
  readonly network?: PodNetworkPhase;
  /** The migration proxy's endpoints (main passes the TLS one; absent: migrations are not acted on). */
  readonly migrationEndpoints?: MigrationEndpoints;
}

export class HandlerRuntime {
  readonly controller: HandlerController;
  readonly metrics: HandlerMetrics;
  readonly heartbeat: Heartbeat;
  readonly readiness = new Readiness();
  readonly records: GhostRecordStore;
  /** Undefined with --disable-device-plugins. */
  readonly devicePlugins: DevicePlugins | undefined;
  readonly #o: HandlerRuntimeOptions;
  readonly #endpoints: HttpEndpoints[] = [];
  #nodeApi: NodeApiServer | undefined;
  #streams: GuestStreams | undefined;
  #closing: Promise<void> | undefined;

  constructor(options: HandlerRuntimeOptions) {
    this.#o = options;
    const { args, log } = options;
    this.records = new GhostRecordStore(args.ghostRecordDir, log.child({ subcomponent: 'ghost-records' }));
    this.heartbeat = new Heartbeat({ nodeName: args.nodeName, patcher: options.nodePatcher, log: log.child({ subcomponent: 'heartbeat' }), intervalMs: args.heartbeatIntervalMs });
    this.controller = new HandlerController({
      nodeName: args.nodeName,
      podsDir: args.podsDir,
      vmiApi: options.vmiApi,
      eventApi: options.eventApi,
      log,
      workers: args.workers,
      watchdogMs: args.watchdogMs,
      resyncPeriodMs: args.resyncPeriodMs,
      records: this.records,
      observeReconcile: (seconds, ok) => this.metrics.observeReconcile(seconds, ok),
      observeLauncherCall: (method, code, seconds) => this.metrics.observeLauncherCall(method, code, seconds),
      ...(options.network === undefined ? {} : { network: options.network }),
      ...(options.migrationEndpoints === undefined ? {} : { migrations: { endpoints: options.migrationEndpoints, settings: args.migration } }),
      ioErrorRetry: { ...IO_ERROR_RETRY, initialMs: args.ioErrorRetryIntervalMs },
    });
    this.metrics = new HandlerMetrics({
      nodeName: args.nodeName,
      vmis: () => this.controller.informer.list(),
      queueDepth: () => this.controller.queue.length,
      processMetrics: options.processMetrics ?? false,
      domainStats: () => this.#domainStatsTargets(),
      domainStatsTimeoutMs: args.metricsScrapeTimeoutMs,
    });
    this.readiness.add('informer-synced', () => this.controller.informer.synced);
    this.readiness.add('node-api-listening', () => this.#nodeApi !== undefined);
    const dp = args.devicePlugins;
    this.devicePlugins = dp === undefined ? undefined : new DevicePlugins({
      dir: dp.dir,
      deviceRoot: dp.deviceRoot,
      devicesPerPlugin: dp.maxDevices,
      registrar: options.registrar ?? kubeletRegistrar(join(dp.dir, KUBELET_SOCKET_NAME)),
      log: log.child({ subcomponent: 'device-plugins' }),
    });
    const plugins = this.devicePlugins;
    if (plugins !== undefined) this.readiness.add('device-plugins-registered', () => plugins.registered);
  }

  /** The node's running VMIs, each with its launcher connection when the handler holds one. */
  #domainStatsTargets(): DomainStatsTarget[] {
    const registry = this.controller.registry;
    return this.controller.informer.list().filter((vmi) => vmi.status?.phase === 'Running').map((vmi) => {
      const uid = vmi.metadata.uid ?? '';
      const client = registry.connection(uid)?.client;
      return {
        namespace: vmi.metadata.namespace ?? '',
        name: vmi.metadata.name ?? '',
        migration: registry.cache.get(uid)?.domain?.migration,
        ...(client === undefined ? {} : { read: (signal: AbortSignal) => client.domainStats(signal) }),
      };
    });
  }

  /** The HTTP ports actually bound: metrics first, then health when it is separate. */
  get httpPorts(): number[] {
    return this.#endpoints.map((e) => e.port);
  }

  get nodeApi(): NodeApiServer | undefined {
    return this.#nodeApi;
  }

  /** Resolves once the handler is ready (false: `signal` aborted first); closes everything on failure. */
  async start(signal: AbortSignal): Promise<boolean> {
    try {
      return await this.#start(signal);
    } catch (err) {
      await this.close();
      throw err;
    }
  }

  async #start(signal: AbortSignal): Promise<boolean> {
    const { args, log } = this.#o;
    // First, as virt-handler does: no new VMIs land here until this handler is ready.
    await this.heartbeat.markUnschedulable();
    const records = await this.records.load();
    log.info({ dir: this.records.dir, records: records.length }, 'ghost records loaded');
    await this.#listenHttp();
    // Registration retries in the background; /readyz reports it until the kubelet took them.
    await this.devicePlugins?.start();
    const ops = new NodeOperations({
      resolver: new VmiResolver({ nodeName: args.nodeName, local: this.controller.informer, remote: this.#o.vmiApi }),
      launchers: this.controller.registry,
      recorder: this.controller.recorder,
      list: () => this.controller.informer.list(),
      enqueue: (key) => this.controller.queue.add(key),
      holdForAnswer: (key) => this.controller.holdForAnswer(key),
      log: log.child({ subcomponent: 'node-api' }),
    });
    const observe = (method: string, code: string): void => this.metrics.observeNodeApiCall(method, code);
    this.#streams = new GuestStreams({ resolver: ops, log: log.child({ subcomponent: 'guest-streams' }), observe });
    const service = nodeApiService(ops, log.child({ subcomponent: 'node-api' }), observe, this.#streams);
    const tls = args.nodeApiTls === undefined ? undefined : { ...args.nodeApiTls, host: args.nodeApiTls.address };
    const apiLog = log.child({ subcomponent: 'node-api' });
    this.#nodeApi = await NodeApiServer.listen({
      socketPath: args.nodeApiSocket, service, tls,
      onRefused: (reason) => apiLog.warn({ reason }, 'node API TLS caller refused'),
      onTlsReload: (e) => (e.reloaded ? apiLog.info('node API TLS certificate reloaded') : apiLog.warn({ reason: e.reason }, 'node API TLS files changed but cannot be used; the ones in force are kept')),
    });
    log.info({ socket: this.#nodeApi.socketPath, tlsPort: this.#nodeApi.tlsPort }, 'node API listening');
    if (!(await this.controller.start(signal))) return false;
    this.heartbeat.start();
    log.info({ ready: this.readiness.report() }, 'handler ready');
    return true;
  }

  async #listenHttp(): Promise<void> {
    const { args, log } = this.#o;
    const metrics: Record<string, EndpointRoute> = {
      '/metrics': metricsRoute(this.metrics.registry),
    };
    const health = healthRoutes(this.readiness);
    const groups = args.metricsPort === args.healthPort && args.metricsPort !== 0
      ? [{ port: args.metricsPort, routes: { ...metrics, ...health } }]
      : [{ port: args.metricsPort, routes: metrics }, { port: args.healthPort, routes: health }];
    for (const { port, routes } of groups) {
      const endpoints = await HttpEndpoints.listen({ host: args.httpAddress, port, routes });
      this.#endpoints.push(endpoints);
      log.info({ address: args.httpAddress, port: endpoints.port, paths: Object.keys(routes) }, 'HTTP endpoints listening');
    }
  }

  /** Idempotent; see the file comment for the order. */
  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    this.readiness.markShuttingDown();
    // Attached consoles would hold the node API's graceful close open until its bound.
    this.#streams?.close();
    await Promise.all([this.#nodeApi?.close(), this.heartbeat.close(), this.devicePlugins?.close()]);
    await this.controller.close(this.#o.args.shutdownGraceMs);
    await Promise.all(this.#endpoints.map((e) => e.close()));
  }
}
