// Our side of libvirt's keepalive program: after a quiet interval send a PING; any message
// from the daemon counts as an answer; after `count` unanswered PINGs the peer is dead.
import { TimeoutError } from './errors.js';

export interface KeepaliveOptions {
  /** Idle time before we send a PING (libvirt's own default is 5 s). */
  readonly intervalMs: number;
  /** Unanswered PINGs after which the connection is declared dead (libvirt's default is 5). */
  readonly count: number;
}

export class Keepalive {
  readonly #options: KeepaliveOptions;
  readonly #ping: () => void;
  readonly #dead: (error: TimeoutError) => void;
  #timer: NodeJS.Timeout | undefined;
  #sawTraffic = false;
  #missed = 0;

  constructor(options: KeepaliveOptions, ping: () => void, dead: (error: TimeoutError) => void) {
    this.#options = options;
    this.#ping = ping;
    this.#dead = dead;
  }

  /** The interval never holds the process open: the socket does that while it matters. */
  start(): void {
    if (this.#timer) return;
    this.#timer = setInterval(() => this.#tick(), this.#options.intervalMs);
    this.#timer.unref();
  }

  /** Any message from the daemon proves it alive. */
  traffic(): void {
    this.#sawTraffic = true;
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  #tick(): void {
    if (!this.#timer) return; // a tick already queued when stop() ran
    if (this.#sawTraffic) {
      this.#sawTraffic = false;
      this.#missed = 0;
      return;
    }
    if (this.#missed >= this.#options.count) {
      this.stop();
      this.#dead(new TimeoutError(`no answer to ${this.#options.count} keepalive pings`));
      return;
    }
    this.#missed++;
    this.#ping();
  }
}
