// A connected launcher: one WatchDomain stream feeding the domain cache (reconnected with
// backoff when it breaks), and a liveness probe. A launcher that answers nothing — neither
// stream nor Ping — for the watchdog timeout, or whose socket file vanished, is declared gone.

import type { cmd } from '@podvirt/proto';
import type { Logger } from 'pino';
import { abortableSleep } from '../abortable-sleep.js';
import type { DomainCache } from './domain-cache.js';
import type { LauncherClient } from './launcher-client.js';
import { isSocket } from './socket-discovery.js';

export interface LauncherConnectionOptions {
  readonly uid: string;
  readonly key: string;
  readonly client: LauncherClient;
  readonly cache: DomainCache;
  readonly log: Logger;
  readonly now: () => number;
  /** Silence longer than this declares the launcher gone (KubeVirt's --watchdog-timeout). */
  readonly watchdogMs: number;
  /** Called when the domain or the launcher's liveness changed: the VMI needs a reconcile. */
  readonly onChange: (key: string) => void;
  /** A launcher notice to record as a Kubernetes Event on the VMI. */
  readonly onNotice: (key: string, uid: string, notice: cmd.Notice) => void;
  readonly reconnectBaseMs?: number;
  readonly reconnectMaxMs?: number;
}

export class LauncherConnection {
  readonly uid: string;
  readonly key: string;
  readonly client: LauncherClient;
  readonly #o: LauncherConnectionOptions;
  readonly #abort = new AbortController();
  #lastContactMs: number;
  #socketGone = false;
  #wasResponsive = true;
  #probing = false;
  #probe: NodeJS.Timeout | undefined;
  #watching: Promise<void> | undefined;
  #stream: ReturnType<LauncherClient['watchDomain']> | undefined;

  constructor(options: LauncherConnectionOptions) {
    this.#o = options;
    this.uid = options.uid;
    this.key = options.key;
    this.client = options.client;
    this.#lastContactMs = options.now();
  }

  /** Starts the domain stream and the probe; the probe runs three times per watchdog period. */
  start(): void {
    if (this.#watching !== undefined) return;
    this.#watching = this.#watchLoop(this.#abort.signal);
    this.#probe = setInterval(() => void this.#probeOnce(), Math.max(1, Math.floor(this.#o.watchdogMs / 3)));
    this.#probe.unref();
  }

  /** Records a domain the handler got from a call (Sync, GetDomain) rather than the stream. */
  observe(domain: cmd.Domain | undefined): void {
    this.#touch();
    this.#o.cache.set(this.uid, this.key, domain);
  }

  /** False once the socket vanished or the launcher was silent for the watchdog timeout. */
  responsive(): boolean {
    return !this.#socketGone && this.#o.now() - this.#lastContactMs < this.#o.watchdogMs;
  }

  get closed(): boolean {
    return this.#abort.signal.aborted;
  }

  /** Cancels the stream and the probe and closes the channel. Idempotent. */
  async close(): Promise<void> {
    this.#abort.abort();
    clearInterval(this.#probe);
    this.#stream?.cancel();
    this.client.close();
    await this.#watching;
  }

  #touch(): void {
    this.#lastContactMs = this.#o.now();
  }

  async #watchLoop(signal: AbortSignal): Promise<void> {
    const base = this.#o.reconnectBaseMs ?? 200;
    let delay = base;
    while (!signal.aborted) {
      const stream = this.client.watchDomain();
      this.#stream = stream;
      try {
        for await (const event of stream as AsyncIterable<cmd.WatchDomainEvent>) {
          delay = base;
          this.#onEvent(event);
        }
      } catch (err) {
        if (signal.aborted) return;
        this.#o.log.debug({ err }, 'domain stream broke, reconnecting');
      }
      await abortableSleep(delay, signal);
      delay = Math.min(delay * 2, this.#o.reconnectMaxMs ?? 5_000);
    }
  }

  #onEvent(event: cmd.WatchDomainEvent): void {
    this.#touch();
    switch (event.event?.$case) {
      case 'domain':
        if (this.#o.cache.set(this.uid, this.key, event.event.value)) this.#o.onChange(this.key);
        break;
      case 'noDomain':
        if (this.#o.cache.set(this.uid, this.key, undefined)) this.#o.onChange(this.key);
        break;
      case 'notice':
        this.#o.onNotice(this.key, this.uid, event.event.value);
        break;
      default:
        break;
    }
  }

  async #probeOnce(): Promise<void> {
    // A ping can take longer than the probe interval when the launcher hangs; one at a time.
    if (this.closed || this.#probing) return;
    this.#probing = true;
    try {
      await this.#checkLiveness();
    } finally {
      this.#probing = false;
    }
  }

  async #checkLiveness(): Promise<void> {
    if (!(await isSocket(this.client.socketPath))) this.#socketGone = true;
    else {
      try {
        await this.client.ping(this.#abort.signal);
        this.#touch();
      } catch (err) {
        this.#o.log.debug({ err }, 'launcher ping failed');
      }
    }
    const responsive = this.responsive();
    if (responsive !== this.#wasResponsive && !this.closed) {
      this.#wasResponsive = responsive;
      if (!responsive) this.#o.log.warn({ socket: this.client.socketPath }, 'launcher unresponsive');
      this.#o.onChange(this.key);
    }
  }
}
