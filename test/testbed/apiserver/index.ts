export { ApiError } from './errors.js';
export { startApiServer, type ApiServer, type ApiServerOptions } from './api-server.js';
export type { AggregationOptions } from './aggregator.js';
export { kubeconfigFor, writeKubeconfig, writeTlsKubeconfig } from './kubeconfig.js';
export type { JsonObject, JsonValue } from './json.js';
export type { RequestListener, RequestRecord } from './request-record.js';
