import { spawn as nodeSpawn } from 'node:child_process';
import type { ChildProcess, SpawnOptions } from 'node:child_process';
import { constants } from 'node:os';
import type { Logger } from './json-logger.js';
import { MonitorError } from './monitor-error.js';
import { stopLeftoverQemu } from './leftover-qemu.js';
import type { NativeBinding } from './native-binding.js';
import type { ProcessTree } from './process-tree.js';
import { Reaper } from './reaper.js';

export interface LauncherMonitorOptions {
  readonly launcherBin: string;
  readonly launcherArgs: readonly string[];
  readonly keepAfterFailure: boolean;
  readonly qemuStopTimeoutMs: number;
  readonly reapSweepIntervalMs: number;
  readonly log: Logger;
  readonly binding: NativeBinding;
  readonly tree: ProcessTree;
  /** Signals processes that are not ours to spawn (a leftover qemu). */
  readonly kill: (pid: number, signal: NodeJS.Signals) => void;
  readonly env?: NodeJS.ProcessEnv;
  readonly spawn?: (command: string, args: readonly string[], options: SpawnOptions) => ChildProcess;
}

export type ForwardedSignal = 'SIGTERM' | 'SIGINT' | 'SIGQUIT';

type Phase = 'idle' | 'launcher' | 'qemu' | 'keep-alive' | 'done';

/**
 * What PID 1 of the launcher container does: runs the launcher, reaps every orphan, turns
 * termination signals into a SIGTERM for the launcher, and once the launcher is gone stops a
 * leftover qemu and reports the launcher's exit code. The caller wires process signals to
 * `forwardSignal` and SIGCHLD to `reapOrphans`.
 */
export class LauncherMonitor {
  readonly #options: LauncherMonitorOptions;
  readonly #log: Logger;
  readonly #reaper: Reaper;
  /** Children Node spawned: libuv waits for them by pid, so the reaper must leave them alone. */
  readonly #owned = new Set<number>();
  #phase: Phase = 'idle';
  #launcher: ChildProcess | undefined;
  #releaseKeepAlive: (() => void) | undefined;

  constructor(options: LauncherMonitorOptions) {
    this.#options = options;
    this.#log = options.log;
    this.#reaper = new Reaper({ binding: options.binding, tree: options.tree, isOwned: (pid) => this.#owned.has(pid) });
  }

  /** Runs the launcher to its end and resolves with the code the monitor should exit with. */
  async run(): Promise<number> {
    if (this.#phase !== 'idle') throw new MonitorError('MONITOR_ERR_STATE', 'LauncherMonitor.run() was already called');
    const sweep = setInterval(() => this.reapOrphans(), this.#options.reapSweepIntervalMs);
    sweep.unref();
    try {
      let code = await this.#runLauncher();
      this.reapOrphans();
      if (code !== 0) this.#log.warn({ exitCode: code }, 'dirty launcher shutdown');
      this.#phase = 'qemu';
      const qemu = await stopLeftoverQemu({
        tree: this.#options.tree,
        kill: this.#options.kill,
        log: this.#log,
        timeoutMs: this.#options.qemuStopTimeoutMs,
      });
      if ((qemu === 'killed' || qemu === 'survived') && code === 0) code = 1;
      // The stopped qemu may still be a zombie here (its exit is seen before the SIGCHLD handler
      // reaps it): reap it now, so a kept-alive container holds no dead qemu.
      this.reapOrphans();
      if (code !== 0 && this.#options.keepAfterFailure) await this.#keepAlive(code);
      this.reapOrphans();
      this.#log.info({ exitCode: code, qemu }, 'monitor exiting');
      return code;
    } finally {
      this.#phase = 'done';
      clearInterval(sweep);
    }
  }

  /** SIGTERM, SIGINT and SIGQUIT all ask the launcher for the same graceful shutdown. */
  forwardSignal(signal: ForwardedSignal): void {
    const launcher = this.#launcher;
    if (this.#phase === 'launcher' && launcher?.pid !== undefined) {
      this.#log.info({ signal, pid: launcher.pid }, 'forwarding signal to launcher as SIGTERM');
      launcher.kill('SIGTERM');
    } else if (this.#phase === 'keep-alive') {
      this.#log.info({ signal }, 'signal received, ending keep-alive');
      this.#releaseKeepAlive?.();
    } else {
      this.#log.info({ signal, phase: this.#phase }, 'signal received, nothing to forward');
    }
  }

  /** Call on every SIGCHLD: one call reaps every orphan that has exited so far. */
  reapOrphans(): void {
    for (const child of this.#reaper.sweep()) {
      this.#log.info({ pid: child.pid, comm: child.comm, how: child.code, status: child.status }, 'reaped orphan');
    }
  }

  #runLauncher(): Promise<number> {
    const { launcherBin, launcherArgs } = this.#options;
    const spawn = this.#options.spawn ?? nodeSpawn;
    this.#phase = 'launcher';
    const env = this.#options.env;
    return new Promise((resolve) => {
      let launcher: ChildProcess;
      try {
        launcher = spawn(launcherBin, launcherArgs, { stdio: 'inherit', ...(env === undefined ? {} : { env }) });
      } catch (err) {
        this.#log.error({ err, bin: launcherBin }, 'launcher failed to start');
        resolve(1);
        return;
      }
      // spawn() returns after fork and before any JavaScript can run a sweep, so the pid is
      // in the owned set before the child can have been seen exiting.
      const pid = launcher.pid;
      if (pid !== undefined) {
        this.#owned.add(pid);
        this.#launcher = launcher;
        this.#log.info({ pid, bin: launcherBin, args: launcherArgs }, 'launcher started');
      }
      launcher.on('error', (err) => {
        if (launcher.pid !== undefined) {
          this.#log.warn({ err, pid: launcher.pid }, 'cannot signal launcher');
          return;
        }
        this.#log.error({ err, bin: launcherBin }, 'launcher failed to start');
        resolve(1);
      });
      launcher.on('exit', (code, signal) => {
        if (pid !== undefined) this.#owned.delete(pid);
        this.#launcher = undefined;
        const exitCode = code ?? 128 + (signal === null ? 0 : constants.signals[signal]);
        this.#log.info({ pid, code, signal, exitCode }, 'launcher exited');
        resolve(exitCode);
      });
    });
  }

  async #keepAlive(code: number): Promise<void> {
    this.#phase = 'keep-alive';
    this.#log.warn({ exitCode: code }, 'keeping launcher container alive after failure until SIGTERM');
    // Signal listeners do not keep Node's event loop alive; this ref'd timer does.
    const hold = setInterval(() => undefined, 2 ** 31 - 1);
    try {
      await new Promise<void>((resolve) => {
        this.#releaseKeepAlive = resolve;
      });
    } finally {
      clearInterval(hold);
      this.#releaseKeepAlive = undefined;
    }
  }
}
