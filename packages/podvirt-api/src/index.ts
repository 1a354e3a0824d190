export { ApiApp, type ApiAppOptions } from './api-app.js';
export { PodvirtApiError, type PodvirtApiErrorCode } from './api-error.js';
export { API_OPTIONS, parseApiFlags, servingNames, type ApiFlags } from './api-flags.js';
export { ADMISSION_PATHS, POD_EVICTION_PATH } from './admission/admitters.js';
