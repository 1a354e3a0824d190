export * as cmd from './gen/cmd.js';
export * as node from './gen/node.js';
export { CMD_VERSIONS, highestCommonVersion } from './version.js';
export { NODE_API_SOCKET } from './node-api-socket.js';
export { MAX_UNFREEZE_TIMEOUT_SECONDS, unfreezeTimeoutProblem } from './freeze-limits.js';
export {
  promiseClient,
  type CallObserver,
  type PromiseClientOptions,
  type PromiseMethods,
  type UnaryCallOptions,
  type UnaryMethod,
} from './promise-client.js';
export { ERROR_CODE_TRAILER } from './error-code-trailer.js';
export { CALL_DEADLINES, cmdDeadlineMs, type CallDeadlines, type CmdUnaryMethod } from './call-deadlines.js';
export { unaryHandler, type SettledCall, type UnaryContext, type UnaryHandlerOptions, type UnaryMethodBody, type WireStatus } from './unary-handler.js';
export { OpTrace, OP_TRACE_ON } from './op-trace.js';
export { shutdownGrpcServer } from './grpc-server-shutdown.js';
export { CallEndedError, type CallEndedCode } from './call-ended-error.js';
export { lenientService, malformedReason } from './malformed-request.js';
export * as deviceplugin from './gen/deviceplugin/v1beta1/api.js';
export { DEVICE_PLUGIN_API_VERSION, DEVICE_PLUGINS_DIR, KUBELET_SOCKET_NAME, DEVICE_HEALTHY, DEVICE_UNHEALTHY } from './device-plugin-api.js';
