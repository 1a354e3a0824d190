export interface GraceClockOptions {
  readonly gracePeriodMs: number;
  /**
   * How often the shutdown request is repeated while the guest is still up: an ACPI press that
   * arrives before the guest's acpid runs is lost for good, so one request is not enough.
   */
  readonly resendIntervalMs: number;
  /** Ask the guest to power off (agent or ACPI). Errors are reported, not fatal: the deadline still holds. */
  readonly requestShutdown: () => Promise<void>;
  /** Force the domain off; called at the deadline and again every interval until stop(). */
  readonly destroy: () => Promise<void>;
  readonly onError?: (err: unknown, phase: 'shutdown' | 'destroy') => void;
  readonly now?: () => number;
}

export interface GraceState {
  readonly started: boolean;
  readonly startedAtMs: number;
  /**
   * The VMI's own grace period, as reported to the handler: the launcher's own (its flag, which
   * the controller pads so that the launcher can still report the end) until a VMI told it.
   */
  readonly gracePeriodSeconds: number;
  /** When this clock destroys the domain: the start plus the launcher's own period. */
  readonly deadlineMs: number;
}

/**
 * The graceful-shutdown clock: started once (SIGTERM or a Shutdown call), it asks the guest
 * to power off now and again every interval, and destroys the domain at the deadline. It
 * stops when the domain is gone. Timers are unref'd so they never keep the process alive.
 */
export class GraceClock {
  readonly #opts: GraceClockOptions;
  readonly #now: () => number;
  #state: GraceState;
  #interval: NodeJS.Timeout | undefined;
  #deadline: NodeJS.Timeout | undefined;
  #inflight: 'shutdown' | 'destroy' | undefined;
  #stopped = false;

  constructor(opts: GraceClockOptions) {
    this.#opts = opts;
    this.#now = opts.now ?? Date.now;
    this.#state = { started: false, startedAtMs: 0, gracePeriodSeconds: Math.round(opts.gracePeriodMs / 1000), deadlineMs: 0 };
  }

  get state(): GraceState {
    return this.#state;
  }

  /** The VMI's own grace period, reported in the state; the deadline stays the launcher's own. */
  reportVmiPeriod(seconds: number): void {
    this.#state = { ...this.#state, gracePeriodSeconds: seconds };
  }

  /** Idempotent: a second call keeps the first deadline (KubeVirt stamps the grace start once). */
  start(): boolean {
    if (this.#state.started || this.#stopped) return false;
    const now = this.#now();
    this.#state = { ...this.#state, started: true, startedAtMs: now, deadlineMs: now + this.#opts.gracePeriodMs };
    this.#interval = setInterval(() => this.#tick(), this.#opts.resendIntervalMs);
    this.#interval.unref();
    // Destroy exactly at the deadline rather than at the next resend tick.
    this.#deadline = setTimeout(() => this.#tick(), this.#opts.gracePeriodMs);
    this.#deadline.unref();
    this.#tick();
    return true;
  }

  /** The domain is gone: no more requests. Idempotent. */
  stop(): void {
    this.#stopped = true;
    clearInterval(this.#interval);
    clearTimeout(this.#deadline);
  }

  #tick(): void {
    if (this.#stopped) return;
    const phase = this.#now() >= this.#state.deadlineMs ? 'destroy' : 'shutdown';
    // One request at a time, except that a slow shutdown request never delays the destroy.
    if (this.#inflight === 'destroy' || (this.#inflight === 'shutdown' && phase === 'shutdown')) return;
    this.#inflight = phase;
    const action = phase === 'destroy' ? this.#opts.destroy : this.#opts.requestShutdown;
    action()
      .catch((err: unknown) => this.#opts.onError?.(err, phase))
      .finally(() => {
        if (this.#inflight === phase) this.#inflight = undefined;
      });
  }
}
