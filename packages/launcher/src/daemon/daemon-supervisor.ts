import { spawn, type ChildProcess } from 'node:child_process';
import { connect } from 'node:net';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { LauncherError } from '../errors.js';
import { parseLibvirtLogLine } from '../logs/libvirt-log-line.js';

const SOCKET_POLL_MS = 10;

export interface DaemonSupervisorOptions {
  readonly command: string;
  readonly args: readonly string[];
  /** Added to the launcher's environment for the daemon. */
  readonly env?: Readonly<Record<string, string>>;
  /** The daemon's unix socket; `start` resolves once it accepts connections. */
  readonly socketPath: string;
  /** Receives the daemon's stderr as JSON lines (`subcomponent: libvirt`) and the supervisor's own notes. */
  readonly log: Logger;
  /** Pause before a restart, so a daemon that dies at once does not spin (KubeVirt waits 1 s). */
  readonly restartDelayMs?: number;
  readonly startTimeoutMs?: number;
  readonly stopTimeoutMs?: number;
  readonly onRestart?: (pid: number) => void;
}

function canConnect(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(path);
    s.once('connect', () => { s.destroy(); resolve(true); });
    s.once('error', () => resolve(false));
  });
}

/**
 * Runs the libvirt daemon and keeps it running: if it dies it is started again after a short
 * pause. Running qemu processes are not its children (libvirt double-forks them), so a daemon
 * restart leaves the VM alone. `close()` stops it: SIGTERM, then SIGKILL after a bound.
 */
export class DaemonSupervisor {
  readonly #o: DaemonSupervisorOptions;
  readonly #lineLog: Logger;
  #child: ChildProcess | undefined;
  #exited: Promise<void> = Promise.resolve();
  #closing: Promise<void> | undefined;
  #restartTimer: NodeJS.Timeout | undefined;
  #restarts = 0;

  constructor(o: DaemonSupervisorOptions) {
    this.#o = o;
    this.#lineLog = o.log.child({ subcomponent: 'libvirt' });
  }

  get pid(): number | undefined {
    return this.#child?.pid;
  }

  get restarts(): number {
    return this.#restarts;
  }

  async start(signal?: AbortSignal): Promise<void> {
    this.#spawn();
    await this.waitForSocket(signal);
  }

  async waitForSocket(signal?: AbortSignal): Promise<void> {
    const deadline = Date.now() + (this.#o.startTimeoutMs ?? 15_000);
    while (!(await canConnect(this.#o.socketPath))) {
      if (this.#closing) throw new LauncherError('LAUNCHER_ERR_DAEMON', 'supervisor closed while waiting for the daemon');
      if (Date.now() > deadline) throw new LauncherError('LAUNCHER_ERR_DAEMON', `libvirt daemon socket ${this.#o.socketPath} did not come up`);
      // Every VMI's start waits for this socket; a refused connect costs one syscall, so look
      // often (50 ms between looks cost a VMI's start 25 ms on average).
      await sleep(SOCKET_POLL_MS, undefined, signal ? { signal } : {});
    }
  }

  #spawn(): void {
    const env = this.#o.env === undefined ? process.env : { ...process.env, ...this.#o.env };
    const child = spawn(this.#o.command, [...this.#o.args], { stdio: ['ignore', 'ignore', 'pipe'], env });
    this.#child = child;
    this.#exited = new Promise((resolve) => child.once('close', () => resolve()));
    child.once('error', (err) => this.#o.log.error({ err }, 'libvirt daemon failed to start'));
    createInterface({ input: child.stderr! }).on('line', (line) => {
      const { level, msg, ...fields } = parseLibvirtLogLine(line);
      this.#lineLog[level](fields, msg);
    });
    child.once('exit', (code, sig) => {
      if (this.#closing) return;
      this.#o.log.warn({ code, signal: sig, pid: child.pid }, 'libvirt daemon exited, restarting');
      this.#restartTimer = setTimeout(() => {
        this.#restarts++;
        this.#spawn();
        if (this.#child?.pid !== undefined) this.#o.onRestart?.(this.#child.pid);
      }, this.#o.restartDelayMs ?? 500);
    });
  }

  /** Idempotent: SIGTERM (libvirt exits in milliseconds and leaves qemu running), SIGKILL after the bound. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      clearTimeout(this.#restartTimer);
      const child = this.#child;
      if (child === undefined || child.exitCode !== null || child.signalCode !== null) return this.#exited;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), this.#o.stopTimeoutMs ?? 5_000);
      await this.#exited;
      clearTimeout(timer);
    })();
    return this.#closing;
  }
}
