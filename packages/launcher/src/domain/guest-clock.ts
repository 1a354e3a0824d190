// After a pause the guest's clock is behind by as long as the pause lasted. As KubeVirt does
// once a VM runs again, the launcher sets it from the host's clock through the guest agent (no
// agent, no change), best effort: every second for up to a minute until the agent takes it,
// never on the path of the call's answer. A newer request replaces one still trying; close()
// stops it.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';

export interface GuestClockOptions {
  /** Sets the guest's clock to `ms` since the epoch. */
  readonly setTime: (ms: number, signal: AbortSignal) => Promise<void>;
  readonly log: Logger;
  readonly now?: () => number;
  /** The wait between two attempts (rejects when `signal` aborts). */
  readonly wait?: (ms: number, signal: AbortSignal) => Promise<void>;
}

// KubeVirt's pace: a try a second, for 60 s.
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

  /** Stops a series still trying. Idempotent. */
  async close(): Promise<void> {
    this.#current?.abort();
    await this.#running;
  }

  async #run(signal: AbortSignal): Promise<void> {
    const now = this.#o.now ?? Date.now;
    const wait = this.#o.wait ?? defaultWait;
    let last: unknown;
    for (let attempt = 1; attempt <= CLOCK_ATTEMPTS; attempt++) {
      if (attempt > 1) {
        if (signal.aborted) return;
        try {
          await wait(CLOCK_RETRY_MS, signal);
        } catch {
          return;
        }
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
