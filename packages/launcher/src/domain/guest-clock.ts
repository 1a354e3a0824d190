// After a pause — a user's, or a live migration's switch-over (on the target once the guest runs
// there, on the source when a failed migration resumes it) — the guest's clock is behind by as
// long as the pause lasted. As KubeVirt does once a VM runs again, the launcher sets it from the
// host's clock through the guest agent (no agent, no change), best effort: a second after the
// unpause and every second after that, for up to a minute, until the agent takes it — never on
// the path of the call's answer. libvirt runs the setting as a job on the domain, so a pause
// right after an unpause would wait for the guest's agent: the first second's wait keeps
// back-to-back pauses clear of it, and a pause cancels a series still waiting (the next unpause
// starts a new one). close() stops it.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';

export interface GuestClockOptions {
  /** Sets the guest's clock to `ms` since the epoch. */
  readonly setTime: (ms: number, signal: AbortSignal) => Promise<void>;
  readonly log: Logger;
  readonly now?: () => number;
  /** The wait between two attempts (rejects when `signal` aborts or has aborted). */
  readonly wait?: (ms: number, signal: AbortSignal) => Promise<void>;
}

// KubeVirt's pace: a try a second (the first one second after the unpause), for 60 s.
export const CLOCK_RETRY_MS = 1_000;
export const CLOCK_ATTEMPTS = 60;

const defaultWait = (ms: number, signal: AbortSignal): Promise<void> => sleep(ms, undefined, { signal, ref: false });

export class GuestClock {
  readonly #o: GuestClockOptions;
  #current: AbortController | undefined;
  #running: Promise<void> = Promise.resolve();

  constructor(o: GuestClockOptions) {
    this.#o = o;
  }

  /** Starts setting the clock; the promise ends with this series of attempts (tests wait on it). */
  sync(): Promise<void> {
    this.#current?.abort();
    const ac = new AbortController();
    this.#current = ac;
    this.#running = this.#run(ac.signal);
    return this.#running;
  }

  /** Stops a series still trying (a pause: the guest's clock stands still again). */
  cancel(): void {
    this.#current?.abort();
  }

  /** Stops a series still trying and waits for it to end. Idempotent. */
  async close(): Promise<void> {
    this.#current?.abort();
    await this.#running;
  }

  async #run(signal: AbortSignal): Promise<void> {
    const now = this.#o.now ?? Date.now;
    const wait = this.#o.wait ?? defaultWait;
    let last: unknown;
    for (let attempt = 1; attempt <= CLOCK_ATTEMPTS; attempt++) {
      try {
        // Rejects once the series is aborted, also when it already was.
        await wait(CLOCK_RETRY_MS, signal);
      } catch {
        return;
      }
      if (signal.aborted) return;
      try {
        await this.#o.setTime(now(), signal);
        this.#o.log.info({ attempt }, 'guest clock set');
        return;
      } catch (err) {
        last = err;
      }
    }
    if (!signal.aborted) this.#o.log.warn({ err: last, attempts: CLOCK_ATTEMPTS }, 'guest clock not set: the guest agent did not take it');
  }
}
