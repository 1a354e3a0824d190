// Leader election through a coordination.k8s.io/v1 Lease, after client-go's: a replica takes a
// Lease whose holder has not renewed it for a lease duration, renews its own every couple of
// seconds, steps down when it cannot renew within the renew deadline, and hands the Lease back
// on a clean stop so a successor need not wait out the duration.
//
// Expiry is judged by this replica's own clock: it measures how long a holder's record has
// stayed unchanged since it saw it, so clock skew between replicas does not matter.

import { abortableSleep } from '@podvirt/kube-runtime';
import type { Logger } from 'pino';
import { isConflict } from '../controller-error.js';
import type { LeaseClient, LeaseRecord } from './lease-client.js';

export interface LeaderElectorOptions {
  readonly client: LeaseClient;
  readonly identity: string;
  readonly log: Logger;
  /** How long a silent holder keeps the Lease; KubeVirt's and client-go's default is 15 s. */
  readonly leaseDurationMs?: number;
  /** How often the leader renews. */
  readonly renewIntervalMs?: number;
  /** A leader that has not renewed for this long steps down (before others may take over). */
  readonly renewDeadlineMs?: number;
  /** How often a follower tries to acquire. */
  readonly retryIntervalMs?: number;
  readonly now?: () => number;
}

export type LeadershipEnd = 'stopped' | 'lost';

/** KubeVirt's virt-controller's (and client-go's) defaults: 15 s lease, 10 s renew deadline, 2 s retry period. */
export const DEFAULT_LEASE_DURATION_MS = 15_000;
export const DEFAULT_RENEW_DEADLINE_MS = 10_000;
export const DEFAULT_RETRY_PERIOD_MS = 2_000;

/** The durations an operator sets with the controller's `--leader-elect-*` flags. */
export interface LeaderElectionTimings {
  readonly leaseDurationMs: number;
  readonly renewDeadlineMs: number;
  /** How often the leader renews and a follower tries to acquire. */
  readonly retryPeriodMs: number;
}

function sameRecord(a: LeaseRecord | undefined, b: LeaseRecord): boolean {
  return a !== undefined && a.holderIdentity === b.holderIdentity && a.renewTime?.getTime() === b.renewTime?.getTime() && a.resourceVersion === b.resourceVersion;
}

export class LeaderElector {
  readonly #o: Required<LeaderElectorOptions>;
  #observed: LeaseRecord | undefined;
  #observedAt = 0;
  #leader = false;

  constructor(options: LeaderElectorOptions) {
    this.#o = {
      leaseDurationMs: DEFAULT_LEASE_DURATION_MS,
      renewIntervalMs: DEFAULT_RETRY_PERIOD_MS,
      renewDeadlineMs: DEFAULT_RENEW_DEADLINE_MS,
      retryIntervalMs: DEFAULT_RETRY_PERIOD_MS,
      now: Date.now,
      ...options,
    };
  }

  get isLeader(): boolean {
    return this.#leader;
  }

  /**
   * Competes for the Lease until `signal` aborts. While leading, runs `lead` with a signal that
   * aborts when leadership ends; resolves once `lead` has returned, telling why it ended.
   */
  async run(signal: AbortSignal, lead: (leading: AbortSignal) => Promise<void>): Promise<LeadershipEnd> {
    while (!signal.aborted && !(await this.#tryAcquireOrRenew(signal))) await abortableSleep(this.#o.retryIntervalMs, signal);
    if (signal.aborted) return 'stopped';
    this.#leader = true;
    this.#o.log.info({ identity: this.#o.identity }, 'became leader');
    const leading = new AbortController();
    const work = lead(leading.signal);
    // A failing `lead` ends the leadership too, rather than leaving a leader that does nothing.
    const workDone = work.then(
      () => leading.abort(),
      (err: unknown) => {
        this.#o.log.error({ err }, 'leader work failed');
        leading.abort();
      },
    );
    const end = await this.#renewLoop(signal, leading.signal);
    leading.abort();
    await workDone;
    this.#leader = false;
    if (end === 'stopped') await this.#release();
    this.#o.log.info({ identity: this.#o.identity, end }, 'leadership ended');
    return end;
  }

  async #renewLoop(signal: AbortSignal, leading: AbortSignal): Promise<LeadershipEnd> {
    let renewedAt = this.#o.now();
    const stop = AbortSignal.any([signal, leading]);
    for (;;) {
      await abortableSleep(this.#o.renewIntervalMs, stop);
      if (stop.aborted) return 'stopped';
      if (await this.#tryAcquireOrRenew(stop)) renewedAt = this.#o.now();
      else if (this.#o.now() - renewedAt >= this.#o.renewDeadlineMs) return 'lost';
    }
  }

  async #tryAcquireOrRenew(signal: AbortSignal): Promise<boolean> {
    const { client, identity, leaseDurationMs } = this.#o;
    const now = this.#o.now();
    const fresh: LeaseRecord = {
      holderIdentity: identity,
      leaseDurationSeconds: Math.ceil(leaseDurationMs / 1000),
      acquireTime: new Date(now),
      renewTime: new Date(now),
      leaseTransitions: 0,
    };
    try {
      const current = await client.get(signal);
      if (!current) return this.#accept(await client.create(fresh, signal));
      if (!sameRecord(this.#observed, current)) {
        this.#observed = current;
        this.#observedAt = now;
      }
      const holder = current.holderIdentity ?? '';
      const heldByOther = holder !== '' && holder !== identity;
      const duration = (current.leaseDurationSeconds ?? leaseDurationMs / 1000) * 1000;
      if (heldByOther && this.#observedAt + duration > now) return false;
      const mine = holder === identity;
      return this.#accept(
        await client.update(
          {
            ...fresh,
            acquireTime: mine ? (current.acquireTime ?? fresh.acquireTime) : fresh.acquireTime,
            leaseTransitions: (current.leaseTransitions ?? 0) + (mine ? 0 : 1),
            resourceVersion: current.resourceVersion,
          },
          signal,
        ),
      );
    } catch (err) {
      if (!isConflict(err)) this.#o.log.warn({ err }, 'cannot acquire or renew lease');
      return false;
    }
  }

  #accept(record: LeaseRecord): true {
    this.#observed = record;
    this.#observedAt = this.#o.now();
    return true;
  }

  /** Hands the Lease back: no holder and a one-second duration, so a successor starts at once. */
  async #release(): Promise<void> {
    const current = this.#observed;
    if (current?.holderIdentity !== this.#o.identity) return;
    try {
      await this.#o.client.update({ ...current, holderIdentity: '', leaseDurationSeconds: 1, renewTime: new Date(this.#o.now()) });
    } catch (err) {
      this.#o.log.warn({ err }, 'cannot release lease');
    }
  }
}
