import { VmiInvalidError, type DefaultedVmi } from '@podvirt/api';
import type { cmd } from '@podvirt/proto';
import type { Logger } from 'pino';
import type { ConvertedDomain } from '../convert/convert-vmi.js';
import type { PrepareStep } from '../convert/prepare-step.js';
import { LauncherError } from '../errors.js';
import { GraceClock } from '../grace-clock.js';
import type { CallOptions, DomainConnection, DomainOp } from './domain-connection.js';
import { DomainTracker, type Identity } from './domain-tracker.js';
import type { HotplugDisks } from './hotplug-disks.js';
import { GuestClock, type GuestClockOptions } from './guest-clock.js';
import { isDown } from './state-map.js';
import type { VmiRef } from './vmi-ref.js';
import type { WatchHub } from './watch-hub.js';

export interface DomainManagerOptions {
  readonly conn: DomainConnection;
  readonly identity: Identity;
  readonly hub: WatchHub;
  readonly log: Logger;
  /** Inspect the world and convert (the converter itself is pure). */
  readonly convert: (vmi: DefaultedVmi, o: CallOptions) => Promise<ConvertedDomain>;
  /** Create the files the domain needs (overlays, ISOs, empty disks). */
  readonly prepare: (steps: readonly PrepareStep[], o: CallOptions) => Promise<void>;
  readonly gracePeriodMs: number;
  readonly shutdownResendMs: number;
  readonly acpiEnabled?: (vmi: DefaultedVmi) => boolean;
  /** Runs once the domain has started (its sockets exist); failures are logged, not thrown. */
  readonly afterStart?: () => Promise<void>;
  readonly now?: () => number;
  /** Hotplugged disks of the running domain, attached and detached on each Sync. */
  readonly hotplug?: Pick<HotplugDisks, 'due' | 'sync'>;
  /** The wait between attempts at the guest's clock after an unpause (tests make it instant). */
  readonly clockWait?: GuestClockOptions['wait'];
}

/**
 * The lifecycle half of the cmd service for the launcher's one domain: Sync, Pause, Unpause,
 * SoftReboot, Reset, Shutdown (graceful, with the grace clock), Kill and Delete. Calls that
 * change the domain run one at a time, as KubeVirt's domain-modify lock does.
 */
export class DomainManager {
  readonly tracker: DomainTracker;
  readonly grace: GraceClock;
  readonly clock: GuestClock;
  readonly #o: DomainManagerOptions;
  #lock: Promise<unknown> = Promise.resolve();
  #acpi = true;

  constructor(o: DomainManagerOptions) {
    this.#o = o;
    this.grace = new GraceClock({
      gracePeriodMs: o.gracePeriodMs,
      resendIntervalMs: o.shutdownResendMs,
      requestShutdown: () => this.#requestShutdown(),
      destroy: () => this.kill(),
      onError: (err, phase) => o.log.warn({ err, phase }, 'graceful shutdown step failed'),
      ...(o.now ? { now: o.now } : {}),
    });
    this.clock = new GuestClock({
      setTime: (ms, signal) => o.conn.setTime(this.#name, ms, { signal }),
      log: o.log,
      ...(o.now ? { now: o.now } : {}),
      ...(o.clockWait ? { wait: o.clockWait } : {}),
    });
    this.tracker = new DomainTracker({
      conn: o.conn, identity: o.identity, hub: o.hub, log: o.log, grace: () => this.grace.state,
      // The guest's clock stood still for the migration's pause, as for a user's.
      onResumedAfterMigration: () => void this.clock.sync(),
      ...(o.now ? { now: o.now } : {}),
    });
  }

  get #name(): string {
    return this.#o.identity.domain;
  }

  #exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#lock.then(fn, fn);
    this.#lock = run.catch(() => undefined);
    return run;
  }

  /** The VMI must be this launcher's: a mismatched identity is a caller bug, refused by field. */
  checkIdentity(vmi: VmiRef): void {
    this.#check(vmi);
  }

  #check(vmi: VmiRef): void {
    const { namespace, name, uid } = this.#o.identity;
    const m = vmi.metadata;
    if (m?.namespace !== namespace) throw VmiInvalidError.at('metadata.namespace', 'Invalid', `this launcher serves ${namespace}/${name}`);
    if (m.name !== name) throw VmiInvalidError.at('metadata.name', 'Invalid', `this launcher serves ${namespace}/${name}`);
    if (m.uid !== uid) throw VmiInvalidError.at('metadata.uid', 'Invalid', `this launcher serves UID ${uid}`);
  }

  /** Whether a soft reboot may press the ACPI power button when no agent is connected. */
  /** What the launcher keeps of the VMI a Sync (or a migration target's preparation) brings. */
  #learn(vmi: DefaultedVmi): void {
    this.#acpi = this.#o.acpiEnabled?.(vmi) ?? vmi.spec.domain.features.acpi.enabled;
    this.grace.reportVmiPeriod(vmi.spec.terminationGracePeriodSeconds);
  }

  async #status(o: CallOptions) {
    const s = await this.#o.conn.getState(this.#name, o);
    if (s === undefined) throw new LauncherError('LAUNCHER_ERR_NO_DOMAIN', `domain ${this.#name} is not defined`);
    return s;
  }

  async #op(op: DomainOp, o: CallOptions): Promise<void> {
    await this.#o.conn.control(this.#name, op, o);
    await this.tracker.refresh();
  }

  /** Define when missing, start when never started, resume when paused by anything but the user. */
  sync(vmi: DefaultedVmi, o: CallOptions = {}): Promise<cmd.Domain> {
    const syncStartedAt = Date.now();
    this.#check(vmi);
    return this.#exclusive(async () => {
      this.#learn(vmi);
      let status = await this.#o.conn.getState(this.#name, o);
      if (status === undefined) {
        // Only a domain about to be defined is converted: converting inspects the world (a
        // qemu-img run per image, the node's facts), and a later Sync (the resume after an I/O
        // error) would throw the result away under the lock the next pause waits for. A defined
        // domain is never redefined from a changed spec.
        const converted = await this.#o.convert(vmi, o);
        // Stage times (ms since the epoch) for the start-up stage benchmark (test/bench).
        const convertedAt = Date.now();
        await this.#o.prepare(converted.prepare, o);
        const preparedAt = Date.now();
        await this.#o.conn.define(converted.xml, o);
        this.#o.log.info({ domain: this.#name, syncStartedAt, convertedAt, preparedAt }, 'domain defined');
        status = await this.#status(o);
      }
      const neverRan = this.tracker.snapshot()?.deleted !== true;
      if (status.state === 'SHUTOFF' && neverRan && !this.grace.state.started) {
        await this.#o.conn.control(this.#name, 'create', o);
        this.#o.log.info({ domain: this.#name }, 'domain started');
        await this.#o.afterStart?.().catch((err: unknown) => this.#o.log.warn({ err }, 'after-start step failed'));
      } else if (status.state === 'PAUSED' && status.reason !== 'USER' && !this.tracker.meta.pausedByUser) {
        await this.#o.conn.control(this.#name, 'resume', o);
      }
      if (this.#o.hotplug?.due(vmi) === true && !this.grace.state.started) {
        const now = await this.#status(o);
        if (now.state === 'RUNNING' || now.state === 'PAUSED') await this.#o.hotplug.sync(vmi, o);
      }
      await this.tracker.refresh();
      const snap = this.tracker.snapshot();
      if (snap === undefined) throw new LauncherError('LAUNCHER_ERR_NO_DOMAIN', `domain ${this.#name} vanished during sync`);
      return snap;
    });
  }

  /**
   * Migration target: convert and make every file the domain needs, but neither define nor
   * start it — the source daemon brings the guest in. Answers the XML this node runs.
   */
  prepareMigrationTarget(vmi: DefaultedVmi, o: CallOptions = {}): Promise<string> {
    this.#check(vmi);
    return this.#exclusive(async () => {
      if ((await this.#o.conn.getState(this.#name, o)) !== undefined) throw new LauncherError('LAUNCHER_ERR_WRONG_STATE', `domain ${this.#name} already exists here; a migration target starts empty`);
      // A migrated-in domain is never synced (the handler syncs only what Sync would change).
      this.#learn(vmi);
      const converted = await this.#o.convert(vmi, o);
      await this.#o.prepare(converted.prepare, o);
      this.#o.log.info({ domain: this.#name }, 'migration target prepared');
      return converted.xml;
    });
  }

  /**
   * One libvirt call on the reply's path, as a plain suspend: libvirt pauses a running domain
   * and leaves a paused one as it is. Only a refusal is looked into, to name the state. The
   * new state is published before the reply, so the caller's next precondition sees it; the
   * lifecycle event that follows re-reads it from libvirt.
   */
  pause(vmi: VmiRef, o: CallOptions = {}): Promise<void> {
    this.#check(vmi);
    return this.#exclusive(async () => {
      o.trace?.mark('domain lock taken');
      // The guest's clock stands still again: it is set after the next unpause.
      this.clock.cancel();
      const before = this.tracker.meta.pausedByUser;
      // Marked first: the SUSPENDED event may be read back before the call returns.
      this.tracker.meta.pausedByUser = true;
      try {
        await this.#toward('suspend', 'PAUSED', 'pause', o);
      } catch (err) {
        this.tracker.meta.pausedByUser = before;
        throw err;
      }
      o.trace?.mark('libvirt virDomainSuspend');
      this.tracker.assume({ state: 'PAUSED', reason: 'USER' });
      o.trace?.mark('state published');
    });
  }

  /** As pause: one resume; libvirt refuses a running domain, which is what unpause wants. */
  unpause(vmi: VmiRef, o: CallOptions = {}): Promise<void> {
    this.#check(vmi);
    return this.#exclusive(async () => {
      o.trace?.mark('domain lock taken');
      const resumed = await this.#toward('resume', 'RUNNING', 'unpause', o);
      o.trace?.mark('libvirt virDomainResume');
      this.tracker.meta.pausedByUser = false;
      this.tracker.assume({ state: 'RUNNING', reason: 'UNPAUSED' });
      o.trace?.mark('state published');
      // The guest's clock stood still while it was paused; set off the answer's path.
      if (resumed) void this.clock.sync();
    });
  }

  /**
   * One libvirt call toward `state`; true when it changed the domain. libvirt's "operation
   * invalid" is looked into: a domain already in `state` is no failure (false), any other state
   * is named in our words; other errors (no domain, a dead daemon) pass as they are.
   */
  async #toward(op: 'suspend' | 'resume', state: 'PAUSED' | 'RUNNING', what: string, o: CallOptions): Promise<boolean> {
    try {
      await this.#o.conn.control(this.#name, op, o);
      return true;
    } catch (err) {
      if (!(err instanceof LauncherError) || err.code !== 'LAUNCHER_ERR_WRONG_STATE') throw err;
      const s = await this.#status(o);
      if (s.state === state) return false;
      throw new LauncherError('LAUNCHER_ERR_WRONG_STATE', `cannot ${what} a domain that is ${s.state.toLowerCase()}`, { cause: err });
    }
  }

  /** Through the agent when connected, else the ACPI power button (refused when ACPI is off). */
  softReboot(vmi: VmiRef, o: CallOptions = {}): Promise<void> {
    this.#check(vmi);
    return this.#exclusive(async () => {
      const s = await this.#status(o);
      if (s.state !== 'RUNNING') throw new LauncherError('LAUNCHER_ERR_WRONG_STATE', `cannot reboot a domain that is ${s.state.toLowerCase()}`);
      if (this.tracker.meta.agentConnected) await this.#o.conn.control(this.#name, 'rebootAgent', o);
      else if (this.#acpi) await this.#o.conn.control(this.#name, 'rebootAcpi', o);
      else throw new LauncherError('LAUNCHER_ERR_NO_AGENT', 'no guest agent connected and ACPI is disabled: cannot soft-reboot');
    });
  }

  reset(vmi: VmiRef, o: CallOptions = {}): Promise<void> {
    this.#check(vmi);
    return this.#exclusive(async () => {
      const s = await this.#status(o);
      if (s.state !== 'RUNNING' && s.state !== 'PAUSED') throw new LauncherError('LAUNCHER_ERR_WRONG_STATE', `cannot reset a domain that is ${s.state.toLowerCase()}`);
      await this.#op('reset', o);
    });
  }

  /** Graceful: marks the domain, asks the guest now and again, destroys at the grace deadline. */
  shutdown(vmi: VmiRef, o: CallOptions = {}): Promise<void> {
    this.#check(vmi);
    return this.#exclusive(async () => {
      await this.#status(o);
      this.beginGracefulShutdown();
    });
  }

  /** Idempotent; also the SIGTERM path. Returns false when there is no domain to shut down. */
  beginGracefulShutdown(): boolean {
    if (this.tracker.status === undefined || isDown(this.tracker.status)) return false;
    if (this.grace.start()) {
      this.#o.log.info({ deadlineMs: this.grace.state.deadlineMs }, 'graceful shutdown started');
      this.tracker.changed();
    }
    return true;
  }

  async #requestShutdown(): Promise<void> {
    const s = await this.#o.conn.getState(this.#name);
    if (s === undefined || isDown(s)) return;
    // A paused guest cannot react to the power button; resume it so it can shut down.
    if (s.state === 'PAUSED') await this.#o.conn.control(this.#name, 'resume');
    await this.#o.conn.control(this.#name, 'shutdown');
  }

  /** Forceful. A missing or stopped domain is success. */
  async kill(_vmi?: VmiRef, o: CallOptions = {}): Promise<void> {
    if (_vmi) this.#check(_vmi);
    const s = await this.#o.conn.getState(this.#name, o);
    if (s === undefined || isDown(s)) return;
    await this.#o.conn.control(this.#name, 'destroy', o).catch(async (err: unknown) => {
      // Lost a race with the guest powering off by itself: that is the outcome we wanted.
      if (isDown(await this.#o.conn.getState(this.#name, o))) return;
      throw err;
    });
    await this.tracker.refresh();
  }

  /** Undefine. A missing domain is success. */
  delete(vmi: VmiRef, o: CallOptions = {}): Promise<void> {
    this.#check(vmi);
    return this.#exclusive(async () => {
      if ((await this.#o.conn.getState(this.#name, o)) === undefined) return;
      await this.#op('undefine', o);
    });
  }

  async close(): Promise<void> {
    this.grace.stop();
    await this.clock.close();
    await this.tracker.close();
  }
}
