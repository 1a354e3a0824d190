export { DEFAULT_EVENTUALLY_DEADLINE_MS, eventually, EventuallyTimeoutError, type EventuallyOptions } from './eventually.js';
export { makeMigrationCertificates, type MigrationCertificateOptions } from './migration-certificates.js';
export { openTestWebSocket, type TestWebSocket, type WsConnectOptions, type WsFrame } from './websocket-client.js';
