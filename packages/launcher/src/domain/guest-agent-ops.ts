import { unfreezeTimeoutProblem, type cmd } from '@podvirt/proto';
import type { Logger } from 'pino';
import { LauncherError } from '../errors.js';
import type { CallOptions, DomainConnection } from './domain-connection.js';
import type { DomainTracker } from './domain-tracker.js';
import { withDeviceAliases } from './device-aliases.js';
import { buildGuestInfo, parseAgentInfo, parseFilesystems, parseUsers } from './guest-info.js';

export interface GuestAgentOpsOptions {
  readonly conn: DomainConnection;
  readonly tracker: DomainTracker;
  readonly domain: string;
  readonly log: Logger;
}

/**
 * The guest-agent half of the cmd service: freeze/unfreeze (with the safety auto-thaw),
 * guest info, users, filesystems, ping, and libvirt's stats.
 */
export class GuestAgentOps {
  readonly #o: GuestAgentOpsOptions;
  #thawTimer: NodeJS.Timeout | undefined;

  constructor(o: GuestAgentOpsOptions) {
    this.#o = o;
  }

  #requireAgent(): void {
    const s = this.#o.tracker.status;
    if (s === undefined) throw new LauncherError('LAUNCHER_ERR_NO_DOMAIN', `domain ${this.#o.domain} is not defined`);
    if (s.state !== 'RUNNING') throw new LauncherError('LAUNCHER_ERR_WRONG_STATE', `the domain is ${s.state.toLowerCase()}`);
    if (!this.#o.tracker.meta.agentConnected) throw new LauncherError('LAUNCHER_ERR_NO_AGENT', 'the guest agent is not connected');
  }

  /** Idempotent; with a timeout above zero the filesystems thaw by themselves after it. */
  async freeze(unfreezeTimeoutSeconds: number, o: CallOptions = {}): Promise<void> {
    const problem = unfreezeTimeoutProblem(unfreezeTimeoutSeconds);
    if (problem !== undefined) throw new LauncherError('LAUNCHER_ERR_INVALID_REQUEST', problem);
    this.#requireAgent();
    const meta = this.#o.tracker.meta;
    if (meta.fsFreezeStatus !== 'frozen') {
      await this.#o.conn.control(this.#o.domain, 'fsFreeze', o);
      meta.fsFreezeStatus = 'frozen';
      this.#o.tracker.changed();
    }
    this.#clearThaw();
    if (unfreezeTimeoutSeconds > 0) {
      this.#thawTimer = setTimeout(() => {
        this.#thawTimer = undefined;
        this.#o.log.warn({ unfreezeTimeoutSeconds }, 'unfreeze timeout reached, thawing');
        this.unfreeze().catch((err: unknown) => this.#o.log.error({ err }, 'automatic thaw failed'));
      }, unfreezeTimeoutSeconds * 1000);
      this.#thawTimer.unref();
    }
  }

  /** Idempotent; cancels the safety thaw. */
  async unfreeze(o: CallOptions = {}): Promise<void> {
    this.#clearThaw();
    const meta = this.#o.tracker.meta;
    if (meta.fsFreezeStatus !== 'frozen') return;
    this.#requireAgent();
    await this.#o.conn.control(this.#o.domain, 'fsThaw', o);
    meta.fsFreezeStatus = '';
    this.#o.tracker.changed();
  }

  #clearThaw(): void {
    clearTimeout(this.#thawTimer);
    this.#thawTimer = undefined;
  }

  async guestInfo(o: CallOptions = {}): Promise<cmd.GuestInfo> {
    this.#requireAgent();
    const [params, agentJson] = await Promise.all([
      this.#o.conn.guestInfo(this.#o.domain, o),
      this.#o.conn.agentCommand(this.#o.domain, '{"execute":"guest-info"}', 5, o),
    ]);
    return buildGuestInfo(params, parseAgentInfo(agentJson), this.#o.tracker.meta.fsFreezeStatus);
  }

  /** The agent answers only a few commands while frozen; an empty list would be a lie. */
  #requireThawed(what: string): void {
    if (this.#o.tracker.meta.fsFreezeStatus === 'frozen') {
      throw new LauncherError('LAUNCHER_ERR_WRONG_STATE', `the guest's filesystems are frozen: unfreeze it to list ${what}`);
    }
  }

  async users(o: CallOptions = {}): Promise<cmd.GuestUser[]> {
    this.#requireAgent();
    this.#requireThawed('users');
    return parseUsers(await this.#o.conn.guestInfo(this.#o.domain, o));
  }

  async filesystems(o: CallOptions = {}): Promise<cmd.GuestFilesystem[]> {
    this.#requireAgent();
    this.#requireThawed('filesystems');
    return parseFilesystems(await this.#o.conn.guestInfo(this.#o.domain, o));
  }

  async ping(timeoutSeconds: number, o: CallOptions = {}): Promise<void> {
    this.#requireAgent();
    await this.#o.conn.agentCommand(this.#o.domain, '{"execute":"guest-ping"}', timeoutSeconds > 0 ? timeoutSeconds : 5, o);
  }

  async stats(o: CallOptions = {}): Promise<cmd.DomainStats> {
    if (this.#o.tracker.status === undefined) throw new LauncherError('LAUNCHER_ERR_NO_DOMAIN', `domain ${this.#o.domain} is not defined`);
    const raw = await this.#o.conn.stats(this.#o.domain, o);
    const values: Record<string, number> = {};
    const labels: Record<string, string> = {};
    for (const [k, v] of Object.entries(raw)) {
      if (typeof v === 'string') labels[k] = v;
      else values[k] = Number(v);
    }
    return { values, labels: withDeviceAliases(labels, this.#o.tracker.meta.deviceAliases) };
  }

  close(): void {
    this.#clearThaw();
  }
}
