// The handler's launchers, one per VMI UID: discovery through the pods dir, single-flight
// connection (Info and GetDomain together, then the domain stream), the start-up and watchdog
// allowances, and the domain cache they all feed.

import { watch, type FSWatcher } from 'node:fs';
import { dirname, join } from 'node:path';
import { vmiLogBindings, type VirtualMachineInstance } from '@podvirt/api';
import type { CallDeadlines, CallObserver, cmd } from '@podvirt/proto';
import type { Logger } from 'pino';
import type { LauncherRecords } from '../ghost-records/ghost-record.js';
import { launcherUnresponsiveMark, markLauncherUnresponsive } from '../ghost-records/unresponsive-marker.js';
import { HandlerError, isHandlerError } from '../handler-error.js';
import { splitObjectKey } from '@podvirt/kube-runtime';
import { DomainCache } from './domain-cache.js';
import { LauncherClient, type ConnectOptions, type Connected } from './launcher-client.js';
import { isLauncherGone, LauncherConnection, type LauncherGone } from './launcher-connection.js';
import { LauncherState } from './launcher-state.js';
import { discoverLauncherSocket, isSocket, LAUNCHER_SOCKET_SUBPATH, type SocketDiscovery } from './socket-discovery.js';
import { probeSocket } from './socket-probe.js';

// KubeVirt gives a launcher whose pod exists but whose socket does not 3 minutes to appear.
export const DEFAULT_INIT_TIMEOUT_MS = 180_000;
// Reconciles look again at a launcher that does not answer every second; a gap much longer
// than that between two attempts means the handler was not running, not that nobody answered.
const STALL_GAP_MS = 5_000;

export interface LauncherRegistryOptions {
  readonly nodeName: string;
  readonly podsDir: string;
  readonly log: Logger;
  readonly now: () => number;
  readonly watchdogMs: number;
  readonly initTimeoutMs?: number;
  readonly timeouts?: Partial<CallDeadlines>;
  readonly onChange: (key: string) => void;
  readonly onNotice: (key: string, uid: string, notice: cmd.Notice) => void;
  readonly reconnectBaseMs?: number;
  /**
   * Ghost records: written before a launcher is first used and removed at release, so that a
   * restarted handler reaches the launchers of VMIs deleted while it was down.
   */
  readonly records?: LauncherRecords;
  /** Sees every launcher call (metrics). */
  readonly observeCall?: CallObserver;
}

export interface LauncherObservation {
  readonly state: LauncherState;
  readonly connection: LauncherConnection | undefined;
  /** The last domain the launcher reported; undefined when none (or never heard from). */
  readonly domain: cmd.Domain | undefined;
  /** Why an Unresponsive launcher was declared gone, when the handler saw it happen. */
  readonly gone?: LauncherGone;
}

export interface ObserveTarget {
  readonly uid: string;
  readonly key: string;
  /** Absent when the VMI is gone from the cluster: then only an existing connection counts. */
  readonly vmi?: VirtualMachineInstance | undefined;
}

export class LauncherRegistry {
  readonly cache = new DomainCache();
  readonly #o: LauncherRegistryOptions;
  readonly #connections = new Map<string, LauncherConnection>();
  readonly #connecting = new Map<string, Promise<LauncherConnection>>();
  readonly #waitingSince = new Map<string, number>();
  readonly #failingSince = new Map<string, { sinceMs: number; lastMs: number }>();
  /** Launchers found gone before any connection was made (a restarted handler's view). */
  readonly #exited = new Map<string, LauncherGone>();
  /** inotify on the sockets dir of each initialising launcher: its rename to launcher-sock wakes the VMI at once. */
  readonly #socketWatches = new Map<string, FSWatcher[]>();
  #closed = false;

  constructor(options: LauncherRegistryOptions) {
    this.#o = options;
  }

  /** UIDs the handler holds state for under `key` (an old VMI of the same name included). */
  uidsFor(key: string): string[] {
    const uids = new Set(this.cache.uids().filter((uid) => this.cache.get(uid)?.key === key));
    for (const [uid, conn] of this.#connections) if (conn.key === key) uids.add(uid);
    for (const uid of this.#o.records?.uidsFor(key) ?? []) uids.add(uid);
    return [...uids];
  }

  async observe(target: ObserveTarget, signal?: AbortSignal): Promise<LauncherObservation> {
    const state = await this.#state(target, signal);
    const connection = this.#connections.get(target.uid);
    const gone = state === LauncherState.Unresponsive ? (connection?.gone ?? this.#exited.get(target.uid)) : undefined;
    return { state, connection, domain: this.cache.get(target.uid)?.domain, ...(gone === undefined ? {} : { gone }) };
  }

  /** Re-reads every connected launcher's domain; a failure is left to the liveness probe. */
  async refresh(): Promise<void> {
    await Promise.allSettled(
      [...this.#connections.values()].map(async (conn) => {
        const domain = await conn.client.getDomain();
        if (this.cache.set(conn.uid, conn.key, domain)) this.#o.onChange(conn.key);
      }),
    );
  }

  /** Forgets a VMI UID: closes its launcher connection and drops its cached domain. */
  async release(uid: string): Promise<void> {
    const conn = this.#connections.get(uid);
    this.#connections.delete(uid);
    this.cache.delete(uid);
    this.#waitingSince.delete(uid);
    this.#failingSince.delete(uid);
    this.#exited.delete(uid);
    this.#unwatchSockets(uid);
    await conn?.close();
    await this.#o.records?.remove(uid);
  }

  /** Closes every connection; the launchers and their VMs keep running. Idempotent. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const uid of [...this.#socketWatches.keys()]) this.#unwatchSockets(uid);
    await Promise.allSettled([...this.#connecting.values()]);
    const all = [...this.#connections.values()];
    this.#connections.clear();
    await Promise.all(all.map((c) => c.close()));
  }

  async #state(target: ObserveTarget, signal: AbortSignal | undefined): Promise<LauncherState> {
    const { uid, vmi } = target;
    const existing = this.#connections.get(uid);
    if (existing !== undefined) {
      // Silence by the clock may be the handler's own stall: a fresh check decides.
      if (existing.responsive() || !(await existing.confirm())) return LauncherState.Ready;
      await markLauncherUnresponsive(existing.client.socketPath, existing.gone);
      return LauncherState.Unresponsive;
    }
    if (this.#closed) return LauncherState.Unresponsive;
    const found = vmi === undefined ? await this.#recorded(uid) : await discoverLauncherSocket(vmi, this.#o.nodeName, this.#o.podsDir);
    const now = this.#o.now();
    switch (found.kind) {
      case 'no-pod':
        return LauncherState.Unresponsive;
      case 'ambiguous':
        throw new HandlerError('HANDLER_ERR_NO_LAUNCHER_SOCKET', `more than one launcher socket: ${found.paths.join(', ')}`);
      case 'waiting': {
        this.#watchSockets(target, found.podUids);
        const since = this.#since(this.#waitingSince, uid, now);
        return now - since >= (this.#o.initTimeoutMs ?? DEFAULT_INIT_TIMEOUT_MS) ? LauncherState.Unresponsive : LauncherState.Initializing;
      }
      case 'found':
        this.#unwatchSockets(uid);
        return this.#stateAt(target, found.path, now, signal);
    }
  }

  async #stateAt(target: ObserveTarget, path: string, now: number, signal: AbortSignal | undefined): Promise<LauncherState> {
    const { uid } = target;
    const mark = await launcherUnresponsiveMark(path);
    if (mark !== undefined) {
      if (isLauncherGone(mark)) this.#exited.set(uid, mark);
      return LauncherState.Unresponsive;
    }
    try {
      await this.#connect(target, path, signal);
      this.#failingSince.delete(uid);
      return LauncherState.Ready;
    } catch (err) {
      if (isHandlerError(err, 'HANDLER_ERR_LAUNCHER_INCOMPATIBLE') || isHandlerError(err, 'HANDLER_ERR_ABORTED')) throw err;
      this.#o.log.debug({ err, socket: path }, 'launcher does not answer yet');
      // Nobody listens on the socket: the launcher exited (also seen by a restarted handler).
      const conclusive = (await probeSocket(path)) === 'refused';
      if (!conclusive && !this.#failingLongEnough(uid, now, this.#o.now())) return LauncherState.Unreachable;
      const why: LauncherGone = conclusive ? 'connection-refused' : 'silent';
      this.#o.log.warn({ socket: path, why }, 'launcher gone');
      await markLauncherUnresponsive(path, why);
      this.#exited.set(uid, why);
      return LauncherState.Unresponsive;
    }
  }

  /**
   * The reconcile also looks again every LAUNCHER_INIT_POLL_MS; the watch only makes the common
   * case immediate (the launcher renames its socket to launcher-sock when ready). A directory
   * that cannot be watched (not there yet) is left to the poll.
   */
  #watchSockets(target: ObserveTarget, podUids: readonly string[]): void {
    if (this.#closed || this.#socketWatches.has(target.uid)) return;
    const watchers: FSWatcher[] = [];
    for (const podUid of podUids) {
      try {
        const w = watch(dirname(join(this.#o.podsDir, podUid, LAUNCHER_SOCKET_SUBPATH)), { persistent: false }, (_event, file) => {
          if (file === 'launcher-sock') this.#o.onChange(target.key);
        });
        w.on('error', () => w.close());
        watchers.push(w);
      } catch {
        // Not there yet: the poll covers it.
      }
    }
    if (watchers.length > 0) this.#socketWatches.set(target.uid, watchers);
  }

  #unwatchSockets(uid: string): void {
    for (const w of this.#socketWatches.get(uid) ?? []) w.close();
    this.#socketWatches.delete(uid);
  }

  /** A VMI gone from the cluster is reached through its ghost record, if the socket is still there. */
  async #recorded(uid: string): Promise<SocketDiscovery> {
    const record = this.#o.records?.get(uid);
    if (record === undefined || !(await isSocket(record.socketFile))) return { kind: 'no-pod' };
    return { kind: 'found', podUid: '', path: record.socketFile };
  }

  /**
   * Whether connecting has failed for the watchdog period. The period restarts when attempts
   * stopped for a while (the handler itself stalled or was starved): silence nobody asked about
   * is not a launcher's fault. `startedMs` is when this attempt began, `nowMs` when it failed.
   */
  #failingLongEnough(uid: string, startedMs: number, nowMs: number): boolean {
    const previous = this.#failingSince.get(uid);
    const gapMs = previous === undefined ? 0 : startedMs - previous.lastMs;
    const since = previous === undefined || gapMs > Math.max(this.#o.watchdogMs / 2, STALL_GAP_MS) ? startedMs : previous.sinceMs;
    this.#failingSince.set(uid, { sinceMs: since, lastMs: nowMs });
    return nowMs - since >= this.#o.watchdogMs;
  }

  #since(map: Map<string, number>, uid: string, now: number): number {
    const since = map.get(uid) ?? now;
    map.set(uid, since);
    return since;
  }

  /** Single flight: concurrent reconciles of one UID share one dial. */
  #connect(target: ObserveTarget, path: string, signal: AbortSignal | undefined): Promise<LauncherConnection> {
    let pending = this.#connecting.get(target.uid);
    if (pending === undefined) {
      pending = this.#dial(target, path, signal).finally(() => this.#connecting.delete(target.uid));
      this.#connecting.set(target.uid, pending);
    }
    return pending;
  }

  async #dial(target: ObserveTarget, path: string, signal: AbortSignal | undefined): Promise<LauncherConnection> {
    const options: ConnectOptions = {
      ...(this.#o.timeouts === undefined ? {} : { timeouts: this.#o.timeouts }),
      ...(signal === undefined ? {} : { signal }),
      ...(this.#o.observeCall === undefined ? {} : { observe: this.#o.observeCall }),
    };
    // Recorded before the first call that acts (Info and GetDomain only read; the Sync comes after
    // this returns), so a handler that dies after acting still knows the socket. Written while
    // the connection is made: both lie on the way to a new VMI's first Sync.
    const recorded = this.#o.records?.add({ ...splitObjectKey(target.key), socketFile: path, uid: target.uid });
    recorded?.catch(() => undefined);
    let connected: Connected;
    try {
      connected = await LauncherClient.connect(path, options);
    } catch (err) {
      await recorded?.catch(() => undefined);
      throw err;
    }
    const { client, domain } = connected;
    try {
      await recorded;
    } catch (err) {
      client.close();
      throw err;
    }
    const log = this.#o.log.child({ ...vmiLogBindings({ ...splitObjectKey(target.key), uid: target.uid }), socket: path });
    const conn = new LauncherConnection({
      uid: target.uid,
      key: target.key,
      client,
      cache: this.cache,
      log,
      now: this.#o.now,
      watchdogMs: this.#o.watchdogMs,
      onChange: this.#o.onChange,
      onNotice: this.#o.onNotice,
      ...(this.#o.reconnectBaseMs === undefined ? {} : { reconnectBaseMs: this.#o.reconnectBaseMs }),
    });
    conn.observe(domain);
    if (this.#closed) {
      await conn.close();
      throw new HandlerError('HANDLER_ERR_ABORTED', 'launcher registry closed');
    }
    this.#connections.set(target.uid, conn);
    conn.start();
    log.info({ version: client.version, launcher: client.info.launcherVersion }, 'launcher connected');
    return conn;
  }
}
