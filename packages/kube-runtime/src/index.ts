export { TOKEN_REFRESH_MS } from './bearer-token.js';
export { ItemBackoff, type ItemBackoffOptions } from './item-backoff.js';
export { isKubeApiError, KubeApiError, type KubeApiErrorCode, type KubeStatusDetails } from './kube-api-error.js';
export {
  JSON_PATCH, KubeClient, MERGE_PATCH, STRATEGIC_MERGE_PATCH,
  type KubeClientOptions, type KubeMethod, type KubeQuery, type KubeRequest, type KubeWatchEvent, type KubeWatchEventType, type KubeWatchRequest,
} from './kube-client.js';
export { isKubeClientError, KubeClientError, type KubeClientErrorCode } from './kube-client-error.js';
export { inClusterConfig, kubeconfigFromDocument, parseKubeconfig, SERVICE_ACCOUNT_DIR, type KubeConfig, type KubeconfigOptions, type PemSource } from './kube-config.js';
export { loadKubeConfig, readKubeconfigFile, type KubeConfigSources } from './load-kube-config.js';
export { WorkQueue } from './work-queue.js';
export { eventName, eventNamePrefix } from './event-name.js';
