import { setTimeout as sleep } from 'node:timers/promises';
import { LauncherError } from '../errors.js';
import type {
  CallOptions, DomainConnection, DomainConnectionEvent, DomainOp, DomainStatus, GuestInfoParams,
} from './domain-connection.js';

export interface ReconnectingOptions {
  readonly connect: (signal: AbortSignal) => Promise<DomainConnection>;
  /** Between attempts while the daemon is being restarted (the supervisor restarts it within ~1 s). */
  readonly retryDelayMs?: number;
  readonly onConnectError?: (err: unknown) => void;
}

/**
 * A DomainConnection that survives the libvirt daemon dying: when its connection closes it
 * reconnects, registers for events again and tells its listeners `reconnected` (events in
 * between were lost, so they re-read the domain). Calls made meanwhile wait for the new
 * connection, bounded by their AbortSignal.
 */
export class ReconnectingConnection implements DomainConnection {
  readonly #opts: ReconnectingOptions;
  readonly #listeners = new Set<(e: DomainConnectionEvent) => void>();
  readonly #closing = new AbortController();
  #current: Promise<{ conn: DomainConnection; unsubscribe: () => Promise<void> }>;

  constructor(opts: ReconnectingOptions) {
    this.#opts = opts;
    this.#current = this.#establish(false);
    // The first failure surfaces through calls; keep it from being an unhandled rejection.
    this.#current.catch(() => undefined);
  }

  /** Resolves once the first connection is up (or rejects when closed first). */
  async ready(o: CallOptions = {}): Promise<void> {
    await this.#conn(o);
  }

  async #establish(announce: boolean): Promise<{ conn: DomainConnection; unsubscribe: () => Promise<void> }> {
    const signal = this.#closing.signal;
    for (;;) {
      signal.throwIfAborted();
      try {
        const conn = await this.#opts.connect(signal);
        const unsubscribe = await conn.subscribe((e) => this.#onEvent(conn, e), { signal });
        if (announce) this.#fanOut({ kind: 'reconnected' });
        return { conn, unsubscribe };
      } catch (err) {
        if (signal.aborted) throw err;
        this.#opts.onConnectError?.(err);
        await sleep(this.#opts.retryDelayMs ?? 200, undefined, { signal, ref: false });
      }
    }
  }

  #onEvent(conn: DomainConnection, e: DomainConnectionEvent): void {
    if (e.kind !== 'closed') {
      this.#fanOut(e);
      return;
    }
    void conn.close().catch(() => undefined);
    if (this.#closing.signal.aborted) return;
    this.#current = this.#establish(true);
    this.#current.catch(() => undefined);
  }

  #fanOut(e: DomainConnectionEvent): void {
    for (const l of [...this.#listeners]) l(e);
  }

  async #conn(o: CallOptions): Promise<DomainConnection> {
    if (this.#closing.signal.aborted) throw new LauncherError('LAUNCHER_ERR_DAEMON', 'libvirt connection closed');
    const wait = this.#current.then((c) => c.conn);
    if (o.signal === undefined) return wait;
    o.signal.throwIfAborted();
    const signal = o.signal;
    return new Promise<DomainConnection>((resolve, reject) => {
      const onAbort = (): void => reject(new LauncherError('LAUNCHER_ERR_DAEMON', 'libvirt daemon not reachable', { cause: signal.reason }));
      signal.addEventListener('abort', onAbort, { once: true });
      wait.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
    });
  }

  async getState(name: string, o: CallOptions = {}): Promise<DomainStatus | undefined> {
    return (await this.#conn(o)).getState(name, o);
  }
  async getXml(name: string, o: CallOptions = {}): Promise<string> {
    return (await this.#conn(o)).getXml(name, o);
  }
  async attachDevice(name: string, xml: string, o: CallOptions = {}): Promise<void> {
    return (await this.#conn(o)).attachDevice(name, xml, o);
  }

  async detachDevice(name: string, xml: string, o: CallOptions = {}): Promise<void> {
    return (await this.#conn(o)).detachDevice(name, xml, o);
  }

  async define(xml: string, o: CallOptions = {}): Promise<void> {
    return (await this.#conn(o)).define(xml, o);
  }
  async control(name: string, op: DomainOp, o: CallOptions = {}): Promise<void> {
    return (await this.#conn(o)).control(name, op, o);
  }
  async setTime(name: string, ms: number, o: CallOptions = {}): Promise<void> {
    return (await this.#conn(o)).setTime(name, ms, o);
  }
  async agentCommand(name: string, json: string, timeoutSeconds: number, o: CallOptions = {}): Promise<string> {
    return (await this.#conn(o)).agentCommand(name, json, timeoutSeconds, o);
  }
  async guestInfo(name: string, o: CallOptions = {}): Promise<GuestInfoParams> {
    return (await this.#conn(o)).guestInfo(name, o);
  }
  async stats(name: string, o: CallOptions = {}): Promise<GuestInfoParams> {
    return (await this.#conn(o)).stats(name, o);
  }

  subscribe(listener: (e: DomainConnectionEvent) => void): Promise<() => Promise<void>> {
    this.#listeners.add(listener);
    return Promise.resolve(() => {
      this.#listeners.delete(listener);
      return Promise.resolve();
    });
  }

  /** Idempotent: stops reconnecting, unregisters events and closes the live connection. */
  async close(): Promise<void> {
    if (this.#closing.signal.aborted) return;
    this.#closing.abort();
    const current = await this.#current.catch(() => undefined);
    if (current === undefined) return;
    await current.unsubscribe().catch(() => undefined);
    await current.conn.close();
  }
}
