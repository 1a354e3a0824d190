// podvirt-launcher-monitor: PID 1 of a launcher pod's compute container (or a subreaper when
// something else is PID 1). The only module that touches `process`.
import { isLogLevel, JsonLogger } from './json-logger.js';
import { MonitorError } from './monitor-error.js';
import { launcherEnv, parseMonitorArgs } from './monitor-args.js';
import { LauncherMonitor } from './monitor.js';
import type { ForwardedSignal } from './monitor.js';
import { loadNativeBinding } from './native-binding.js';
import { ProcessTree } from './process-tree.js';

const FORWARDED: readonly ForwardedSignal[] = ['SIGTERM', 'SIGINT', 'SIGQUIT'];

async function main(): Promise<number> {
  const level = process.env['PODVIRT_LOG_LEVEL'] ?? 'info';
  const log = new JsonLogger({
    bindings: { component: 'virt-launcher-monitor' },
    level: isLogLevel(level) ? level : 'info',
  });
  let monitor: LauncherMonitor;
  try {
    const args = parseMonitorArgs(process.argv.slice(2), process.env);
    const binding = loadNativeBinding();
    monitor = new LauncherMonitor({
      ...args,
      log,
      binding,
      tree: new ProcessTree(),
      kill: (pid, signal) => process.kill(pid, signal),
      env: launcherEnv(process.env),
    });
    // Before the launcher starts, so that even its first double-forked helper lands here.
    binding.setChildSubreaper();
    // startedAt: when this process was exec'd, for the start-up stage benchmark (test/bench).
    log.info({ pid: process.pid, subreaper: binding.isChildSubreaper(), startedAt: Math.round(performance.timeOrigin) }, 'monitor started');
  } catch (err) {
    log.error({ err, code: err instanceof MonitorError ? err.code : undefined }, 'monitor cannot start');
    return 1;
  }
  process.on('SIGCHLD', () => monitor.reapOrphans());
  for (const signal of FORWARDED) process.on(signal, () => monitor.forwardSignal(signal));
  return monitor.run();
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    // Last resort: the logger itself may be what failed.
    process.stderr.write(`podvirt-launcher-monitor: ${String(err)}\n`);
    process.exit(1);
  },
);
