export { JsonLogger, isLogLevel } from './json-logger.js';
export type { JsonLoggerOptions, Logger, LogLevel } from './json-logger.js';
export { stopLeftoverQemu } from './leftover-qemu.js';
export type { QemuStopResult, StopLeftoverQemuOptions } from './leftover-qemu.js';
export {
  DEFAULT_LAUNCHER_BIN,
  DEFAULT_QEMU_STOP_TIMEOUT_MS,
  DEFAULT_REAP_SWEEP_INTERVAL_MS,
  MONITOR_OPTIONS,
  parseMonitorArgs,
} from './monitor-args.js';
export type { MonitorArgs } from './monitor-args.js';
export { MonitorError } from './monitor-error.js';
export type { MonitorErrorCode } from './monitor-error.js';
export { LauncherMonitor } from './monitor.js';
export type { ForwardedSignal, LauncherMonitorOptions } from './monitor.js';
export { loadNativeBinding } from './native-binding.js';
export type { ChildExit, NativeBinding } from './native-binding.js';
export { ProcessTree } from './process-tree.js';
export type { ProcessStat } from './process-tree.js';
export { Reaper } from './reaper.js';
export type { ReapedChild, ReaperOptions } from './reaper.js';
