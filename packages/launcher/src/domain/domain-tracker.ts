import { setTimeout as sleep } from 'node:timers/promises';
import type { cmd } from '@podvirt/proto';
import type { Logger } from 'pino';
import type { GraceState } from '../grace-clock.js';
import type { DomainConnection, DomainConnectionEvent, DomainStatus } from './domain-connection.js';
import { deviceAliases } from './device-aliases.js';
import { parseInterfaces, parseOsInfo } from './guest-info.js';
import { isDown, toKubevirtState } from './state-map.js';
import type { WatchHub } from './watch-hub.js';

export interface Identity {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  readonly domain: string;
}

/** What the launcher knows about the domain beyond libvirt's state (KubeVirt keeps this in its metadata cache). */
export interface DomainMeta {
  pausedByUser: boolean;
  agentConnected: boolean;
  osInfo: cmd.GuestOsInfo | undefined;
  interfaces: cmd.GuestInterface[];
  /** The guest NICs the pod network set-up wired (see network/pod-network-setup.ts). */
  domainInterfaces: cmd.DomainInterface[];
  fsFreezeStatus: string;
  machine: string;
  uuid: string;
  /** Target device (vda, tap0) → the VMI's disk or interface name, from the live XML. */
  deviceAliases: Record<string, string>;
  /** The last outgoing live migration (migration/migration-source.ts). */
  migration?: cmd.MigrationProgress;
}

export interface DomainTrackerOptions {
  readonly conn: DomainConnection;
  readonly identity: Identity;
  readonly hub: WatchHub;
  readonly log: Logger;
  readonly grace: () => GraceState;
  readonly now?: () => number;
  /**
   * The guest runs again after a live migration's pause: here as the target once the switch-over
   * is done (or post-copy began), or here as the source when the migration failed after pausing it.
   */
  readonly onResumedAfterMigration?: () => void;
}

/**
 * Follows the one domain: on every libvirt event (and every change of our own marks) it
 * re-reads the state, builds the KubeVirt-shaped snapshot and publishes it when it changed.
 * It resolves `gone` once the domain's qemu is down after having run, or the domain vanished.
 */
const INTERFACE_POLL_MS = 10_000;

export class DomainTracker {
  readonly meta: DomainMeta = { pausedByUser: false, agentConnected: false, osInfo: undefined, interfaces: [], domainInterfaces: [], fsFreezeStatus: '', machine: '', uuid: '', deviceAliases: {} };
  readonly #o: DomainTrackerOptions;
  #status: DomainStatus | undefined;
  #everDefined = false;
  #started = false;
  #needXml = true;
  #last = '';
  #refreshing: Promise<void> | undefined;
  #again = false;
  #unsubscribe: (() => Promise<void>) | undefined;
  #poll: NodeJS.Timeout | undefined;
  #resolveGone!: (d: cmd.Domain | undefined) => void;
  readonly gone: Promise<cmd.Domain | undefined> = new Promise((r) => (this.#resolveGone = r));
  #resolveDefined!: () => void;
  /** Resolves when a domain exists (the qemu-timeout waits for this). */
  readonly defined: Promise<void> = new Promise((r) => (this.#resolveDefined = r));

  constructor(o: DomainTrackerOptions) {
    this.#o = o;
  }

  async start(signal?: AbortSignal): Promise<void> {
    this.#unsubscribe = await this.#o.conn.subscribe((e) => this.#onEvent(e), signal ? { signal } : {});
    await this.refresh();
  }

  get status(): DomainStatus | undefined {
    return this.#status;
  }

  snapshot(): cmd.Domain | undefined {
    if (this.#status === undefined && !this.#everDefined) return undefined;
    const { namespace, name, uid, domain } = this.#o.identity;
    const kv = toKubevirtState(this.#status);
    const g = this.#o.grace();
    const m = this.meta;
    return {
      name: domain, uuid: m.uuid, vmiUid: uid, namespace, vmiName: name, state: kv.state, reason: kv.reason,
      deleted: this.#status === undefined || (this.#started && isDown(this.#status)),
      pausedByUser: m.pausedByUser,
      gracefulShutdown: { started: g.started, startedAtMs: g.startedAtMs, gracePeriodSeconds: g.gracePeriodSeconds, deadlineMs: g.deadlineMs },
      agentConnected: m.agentConnected, osInfo: m.osInfo, interfaces: m.interfaces, fsFreezeStatus: m.fsFreezeStatus,
      machine: m.machine, domainInterfaces: m.domainInterfaces, observedAtMs: (this.#o.now ?? Date.now)(),
      ...(m.migration === undefined ? {} : { migration: m.migration }),
    };
  }

  notice(type: 'Normal' | 'Warning', reason: string, message: string): void {
    this.#o.hub.publish({ event: { $case: 'notice', value: { type, reason, message } } });
  }

  /** Re-read and publish; concurrent callers share one pass plus at most one follow-up. */
  refresh(): Promise<void> {
    if (this.#refreshing) {
      this.#again = true;
      return this.#refreshing;
    }
    this.#refreshing = (async () => {
      do {
        this.#again = false;
        await this.#refreshOnce().catch((err: unknown) => this.#o.log.warn({ err }, 'domain refresh failed'));
      } while (this.#again);
    })().finally(() => (this.#refreshing = undefined));
    return this.#refreshing;
  }

  async #refreshOnce(): Promise<void> {
    const { conn, identity } = this.#o;
    this.#status = await conn.getState(identity.domain);
    if (this.#status !== undefined) {
      this.#everDefined = true;
      this.#resolveDefined();
      if (!isDown(this.#status)) this.#started = true;
      if (this.#needXml && !isDown(this.#status)) await this.#readXml();
      if (this.#status.state === 'RUNNING') this.meta.pausedByUser = false;
    }
    if (isDown(this.#status)) this.meta.agentConnected = false;
    this.#publish();
  }

  async #readXml(): Promise<void> {
    const xml = await this.#o.conn.getXml(this.#o.identity.domain);
    this.meta.uuid = /<uuid>([^<]+)<\/uuid>/.exec(xml)?.[1] ?? '';
    this.meta.machine = /<type [^>]*machine=['"]([^'"]+)['"]/.exec(xml)?.[1] ?? '';
    this.meta.agentConnected = /name=['"]org\.qemu\.guest_agent\.0['"][^>]*state=['"]connected['"]/.test(xml);
    this.meta.deviceAliases = deviceAliases(xml);
    this.#needXml = false;
    if (this.meta.agentConnected && this.meta.osInfo === undefined) void this.#fetchGuestInfo();
  }

  #publish(): void {
    const snap = this.snapshot();
    const key = JSON.stringify({ ...snap, observedAtMs: 0 });
    if (key !== this.#last) {
      this.#last = key;
      this.#o.hub.publish(snap === undefined ? { event: { $case: 'noDomain', value: {} } } : { event: { $case: 'domain', value: snap } });
    }
    if (snap?.deleted === true) this.#resolveGone(snap);
  }

  #onEvent(e: DomainConnectionEvent): void {
    if ('domain' in e && e.domain !== this.#o.identity.domain) return;
    this.#o.log.debug({ event: e }, 'libvirt event');
    switch (e.kind) {
      case 'lifecycle':
        // A user's pause or unpause: the call published the state it left (assume) before its
        // answer, and the event only confirms it; a re-read would be one more daemon round trip
        // beside the next call. Any other event, or one that does not match, re-reads.
        if (this.#confirms(e.event, e.detail)) return;
        if (e.event === 'STARTED') this.#needXml = true;
        if (e.event === 'CRASHED') this.notice('Warning', 'GuestPanicked', `the guest crashed (${e.detail.toLowerCase()})`);
        if (e.event === 'RESUMED' && (e.detail === 'MIGRATED' || e.detail === 'POSTCOPY')) this.#o.onResumedAfterMigration?.();
        break;
      case 'agent':
        this.meta.agentConnected = e.connected;
        if (e.connected) void this.#fetchGuestInfo();
        break;
      case 'reboot':
        this.meta.fsFreezeStatus = '';
        break;
      case 'ioError':
        this.notice('Warning', 'IOerror', `I/O error on ${e.device}: ${e.reason || 'unknown'} (action ${e.action})`);
        break;
      case 'watchdog':
        this.notice('Warning', 'WatchdogFired', `the guest watchdog fired (action ${e.action})`);
        break;
      case 'reconnected':
        this.#needXml = true;
        break;
      case 'closed':
        return;
    }
    void this.refresh();
  }

  #confirms(event: string, detail: string): boolean {
    const s = this.#status;
    if (this.#refreshing !== undefined || s === undefined) return false;
    if (event === 'SUSPENDED' && detail === 'PAUSED') return s.state === 'PAUSED' && s.reason === 'USER';
    if (event === 'RESUMED' && detail === 'UNPAUSED') return s.state === 'RUNNING' && s.reason === 'UNPAUSED';
    return false;
  }

  async #fetchGuestInfo(): Promise<void> {
    // The agent answers a moment after its channel opens; a few spaced tries cover that.
    for (let attempt = 0; attempt < 5 && this.meta.agentConnected; attempt++) {
      try {
        const p = await this.#o.conn.guestInfo(this.#o.identity.domain);
        this.meta.osInfo = parseOsInfo(p);
        this.meta.interfaces = parseInterfaces(p);
        this.#publish();
        this.#pollInterfaces();
        return;
      } catch (err) {
        this.#o.log.debug({ err, attempt }, 'guest info not available yet');
        await sleep(1000, undefined, { ref: false });
      }
    }
  }

  /**
   * A call libvirt just completed left the domain in `status` (a pause, a resume): publish it
   * without another round trip. The lifecycle event it causes re-reads the state, and a
   * refresh already under way reads again after it, so libvirt's word stays the last.
   */
  assume(status: DomainStatus): void {
    // A domain paused for another reason (an I/O error) stays paused for that reason.
    if (!(status.state === 'PAUSED' && this.#status?.state === 'PAUSED')) this.#status = status;
    if (this.#refreshing !== undefined) this.#again = true;
    this.#publish();
  }

  /** Our own marks changed (pause by user, freeze, grace): publish without waiting for libvirt. */
  changed(): void {
    this.#publish();
  }

  /**
   * The guest's addresses change after the agent first answers (DHCP runs later), so they are
   * read again every 10 s while the agent is connected, as KubeVirt's agent poller does.
   */
  #pollInterfaces(): void {
    clearTimeout(this.#poll);
    this.#poll = setTimeout(() => {
      if (!this.meta.agentConnected || this.#unsubscribe === undefined) return;
      void this.#o.conn.guestInfo(this.#o.identity.domain).then(
        (p) => {
          if (this.#unsubscribe === undefined) return;
          this.meta.interfaces = parseInterfaces(p);
          this.#publish();
        },
        (err: unknown) => this.#o.log.debug({ err }, 'guest interfaces not available'),
      ).finally(() => {
        // A close() during the read must not be followed by a new timer or a publish.
        if (this.#unsubscribe !== undefined) this.#pollInterfaces();
      });
    }, INTERFACE_POLL_MS).unref();
  }

  async close(): Promise<void> {
    clearTimeout(this.#poll);
    const unsubscribe = this.#unsubscribe;
    this.#unsubscribe = undefined;
    await unsubscribe?.();
  }
}
