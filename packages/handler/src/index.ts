export { type Action } from './reconcile/action.js';
export { computePhase } from './reconcile/compute-phase.js';
export { computeStatus, type StatusInput, type SyncFailure } from './reconcile/compute-status.js';
export { decide, SHUTDOWN_RESEND_MS } from './reconcile/decide.js';
export { LAUNCHER_WAIT_MS } from './launcher/launcher-waits.js';
export { EVENT_SOURCE_COMPONENT, HandlerController, type HandlerControllerOptions } from './handler-controller.js';
export { HANDLER_USAGE, parseDuration, parseHandlerArgs, type HandlerArgs, type NodeApiTlsArgs } from './handler-args.js';
export { HandlerRuntime, type HandlerRuntimeOptions, type RuntimeArgs } from './handler-runtime.js';
export { GhostRecordStore } from './ghost-records/ghost-record-store.js';
export type { GhostRecord, LauncherRecords } from './ghost-records/ghost-record.js';
export { UNRESPONSIVE_MARKER } from './ghost-records/unresponsive-marker.js';
export { Heartbeat, HEARTBEAT_INTERVAL_MS, HEARTBEAT_JITTER, type HeartbeatOptions } from './heartbeat/heartbeat.js';
export { KubeNodePatcher } from './heartbeat/kube-node-patcher.js';
export type { NodeMetadataPatch, NodePatcher } from './heartbeat/node-patcher.js';
export { HandlerMetrics, type HandlerMetricsOptions } from './metrics/handler-metrics.js';
export { Readiness } from './health/readiness.js';
export { NodeApiServer, type NodeApiServerOptions, type NodeApiTls } from './node-api/node-api-server.js';
export { nodeApiService } from './node-api/node-api-service.js';
export { NodeOperations, type NodeOperationsOptions } from './node-api/node-operations.js';
export { VmiResolver } from './node-api/vmi-resolver.js';
export { HandlerError, isHandlerError, type HandlerErrorCode } from './handler-error.js';
export { KubeVmiApi } from './kube/kube-vmi-api.js';
export type { VmiApi, VmiList, VmiWatchEvent, WatchEventType } from './kube/vmi-api.js';
export { VmiInformer, type InformerEventType, type VmiInformerOptions } from './kube/vmi-informer.js';
export { DomainCache } from './launcher/domain-cache.js';
export { LauncherClient } from './launcher/launcher-client.js';
export { LauncherConnection } from './launcher/launcher-connection.js';
export { DEFAULT_INIT_TIMEOUT_MS, LauncherRegistry, type LauncherObservation } from './launcher/launcher-registry.js';
export { LauncherState } from './launcher/launcher-state.js';
export { discoverLauncherSocket, LAUNCHER_SOCKET_SUBPATH, type SocketDiscovery } from './launcher/socket-discovery.js';
export { PodNetworkWiring, type PodNetworkWiringOptions } from './network/pod-network-wiring.js';
export type { PodNetworkPhase } from './network/pod-network-phase.js';
export { listenSource, listenTarget, type SourceProxy, type SourceProxyOptions, type TargetProxy, type TargetProxyOptions } from './migration-proxy/migration-proxy.js';
export { loadMigrationTls, MIGRATION_TLS_FILES, type MigrationTls } from './migration-proxy/migration-tls.js';
export {
  hostMigrationSocket, MIGRATION_STREAMS, migrationSocketName, migrationUris, podMigrationSocket, POD_MIGRATION_PROXY_DIR,
  type MigrationStream, type MigrationUris,
} from './migration-proxy/migration-sockets.js';
