// A connected launcher: one WatchDomain stream feeding the domain cache (reconnected with
// backoff when it breaks), and a liveness probe. A launcher is declared gone only on evidence:
// its socket vanished or refuses connections (nobody listens: the launcher exited), or it has
// been silent past the watchdog timeout AND a call made just now fails too. The last rule keeps
// a handler that was itself stopped or starved from blaming its own stall on a healthy launcher:
// the "last contact" time grows stale while the handler does not run, not while the launcher
// does not answer.

import type { cmd } from '@podvirt/proto';
import { abortableSleep } from '@podvirt/kube-runtime';
import type { Logger } from 'pino';
import type { DomainCache } from './domain-cache.js';
import type { LauncherClient } from './launcher-client.js';
import { probeSocket } from './socket-probe.js';

/** Why a launcher was declared gone. */
export type LauncherGone = 'socket-removed' | 'connection-refused' | 'silent';

export function isLauncherGone(value: string): value is LauncherGone {
  return value === 'socket-removed' || value === 'connection-refused' || value === 'silent';
}

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
  /** Conclusive: the launcher process is gone and cannot come back. */
  #exited: LauncherGone | undefined;
  /** A fresh call failed while the clock said silent: gone unless it answers again. */
  #silentConfirmed = false;
  #wasResponsive = true;
  #probing: Promise<void> | undefined;
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

  /**
   * False once the launcher is known gone. Silence by the clock alone is not enough: see
   * confirm(), which the caller runs when this is false to get a verdict from a fresh call.
   */
  responsive(): boolean {
    return this.#exited === undefined && !this.#silentConfirmed && !this.#silentByClock();
  }

  /** Why the launcher is gone, once a verdict was reached. */
  get gone(): LauncherGone | undefined {
    if (this.#exited !== undefined) return this.#exited;
    return this.#silentConfirmed && this.#silentByClock() ? 'silent' : undefined;
  }

  /**
   * Checks now (shares a probe already running): the socket, then a fresh Ping. Resolves
   * whether the launcher is gone.
   */
  async confirm(): Promise<boolean> {
    await this.#probeOnce();
    return this.gone !== undefined;
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
    this.#silentConfirmed = false;
  }

  #silentByClock(): boolean {
    return this.#o.now() - this.#lastContactMs >= this.#o.watchdogMs;
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
      // A launcher that exited breaks its stream first: find out now, not at the next probe.
      if (!signal.aborted) await this.#probeOnce();
      if (this.#exited !== undefined) return;
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

  /** One check at a time: a ping can take longer than the probe interval when the launcher hangs. */
  #probeOnce(): Promise<void> {
    if (this.closed || this.#exited !== undefined) return Promise.resolve();
    this.#probing ??= this.#checkLiveness().finally(() => (this.#probing = undefined));
    return this.#probing;
  }

  async #checkLiveness(): Promise<void> {
    const socket = await probeSocket(this.client.socketPath);
    if (socket === 'missing') this.#exited = 'socket-removed';
    else if (socket === 'refused') this.#exited = 'connection-refused';
    else {
      // Only a ping sent when the launcher was already silent for the whole watchdog period
      // counts: one sent earlier may have failed only because the handler stalled under it.
      const askedWhenSilent = this.#silentByClock();
      try {
        await this.client.ping(this.#abort.signal);
        this.#touch();
      } catch (err) {
        this.#o.log.debug({ err }, 'launcher ping failed');
        if (askedWhenSilent && this.#silentByClock()) this.#silentConfirmed = true;
      }
    }
    const responsive = this.gone === undefined;
    if (responsive !== this.#wasResponsive && !this.closed) {
      this.#wasResponsive = responsive;
      if (!responsive) this.#o.log.warn({ socket: this.client.socketPath, why: this.gone }, 'launcher gone');
      this.#o.onChange(this.key);
    }
  }
}
