export { abortableSleep } from './abortable-sleep.js';
export { TOKEN_REFRESH_MS } from './bearer-token.js';
export { EventRecorder, type EventRecorderOptions } from './event-recorder.js';
export type { CoreEvent, EventCountPatch, EventSink } from './event-sink.js';
export {
  Informer,
  type InformerEventType, type InformerLog, type InformerOptions, type ListWatchSource, type ObjectList,
} from './informer.js';
export {
  HttpEndpoints, HttpEndpointsError, metricsRoute, probeRoutes,
  type EndpointResponse, type EndpointRoute, type HttpEndpointsOptions, type MetricsSource,
} from './http-endpoints.js';
export { objectKey, splitObjectKey, type KubeObject } from './object-key.js';
export { ItemBackoff, type ItemBackoffOptions } from './item-backoff.js';
export { isKubeApiError, KubeApiError, type KubeApiErrorCode, type KubeStatusDetails } from './kube-api-error.js';
export {
  JSON_PATCH, KubeClient, MERGE_PATCH, STRATEGIC_MERGE_PATCH,
  type KubeClientOptions, type KubeMethod, type KubeQuery, type KubeRequest, type KubeUpgrade, type KubeUpgradeRequest, type KubeWatchEvent, type KubeWatchEventType, type KubeWatchRequest,
} from './kube-client.js';
export { isKubeClientError, KubeClientError, type KubeClientErrorCode } from './kube-client-error.js';
export { inClusterConfig, kubeconfigFromDocument, parseKubeconfig, SERVICE_ACCOUNT_DIR, type KubeConfig, type KubeconfigOptions, type PemSource } from './kube-config.js';
export { KubeEventSink } from './kube-event-sink.js';
export { WATCH_TIMEOUT_SECONDS } from './kube-list-watch.js';
export { loadKubeConfig, readKubeconfigFile, type KubeConfigSources } from './load-kube-config.js';
export {
  EVENTS, LEASES, NODES, PERSISTENT_VOLUME_CLAIMS, PODS, ResourceClient,
  type KubeResource, type Selectors,
} from './resource-client.js';
export { WorkQueue } from './work-queue.js';
export { eventName, eventNamePrefix } from './event-name.js';
export { KubeVmStateApi } from './vm-state-api.js';
export { KubeVolumeApi } from './volume-api.js';
