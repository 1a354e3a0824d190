export { ApiApp, type ApiAppOptions } from './api-app.js';
export { PodvirtApiError, type PodvirtApiErrorCode } from './api-error.js';
export { API_OPTIONS, DEFAULT_HANDLER_PORT, NODE_API_SECRET_FLAGS, parseApiFlags, servingNames, type ApiFlags } from './api-flags.js';
export { NODE_API_CLIENT_NAME, NODE_API_SERVER_NAME } from './tls/node-api-certificates.js';
export { ADMISSION_PATHS, POD_EVICTION_PATH } from './admission/admitters.js';
