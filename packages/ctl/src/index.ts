export { runCli, type CliContext, type TextSink } from './cli.js';
export { ConnectError, type ConnectFailure } from './connect-error.js';
export {
  DEFAULT_NAMESPACE,
  DEFAULT_UNFREEZE_TIMEOUT_SECONDS,
  NODE_API_SOCKET_ENV,
} from './defaults.js';
export { NodeApiError, type StatusName } from './node-api-error.js';
export { NodeApiClient, type CallOptions, type NodeApi } from './node-client.js';
export { parseArgs, type Invocation } from './parse-args.js';
export { UsageError } from './usage-error.js';
