// Paces the resume of a VM that qemu paused on an I/O error (a full disk, most often). The
// launcher's Sync resumes such a domain; if the cause remains, qemu pauses it again at the
// guest's next write, and every round trip is a reconcile and status writes. As KubeVirt's
// virt-handler does (its io-error retry manager): the first I/O-error pause is resumed at once;
// a pause seen again within `settleMs` of a resume waits until `initialMs` after that resume,
// the wait doubling per round up to `maxMs`; a VM that stayed running for `settleMs` starts
// afresh. decide() stays pure: this state lives beside it, in the reconciler.

import type { cmd } from '@podvirt/proto';
import { domainExists } from '../launcher/domain-liveness.js';

export interface IoErrorRetryOptions {
  /** The first wait between resumes (KubeVirt: 10 s). */
  readonly initialMs: number;
  /** The longest wait between resumes (KubeVirt: 3 min). */
  readonly maxMs: number;
  /** A pause later than this after a resume is a new failure (KubeVirt: 30 s). */
  readonly settleMs: number;
}

export const IO_ERROR_RETRY: IoErrorRetryOptions = { initialMs: 10_000, maxMs: 180_000, settleMs: 30_000 };

interface RetryState {
  /** When the last resume was let through. */
  lastRunMs: number;
  /** No resume before this. */
  nextRunMs: number;
  waitMs: number;
  /** The domain paused again after the last resume. */
  lastRunFailed: boolean;
}

/** Whether qemu holds this domain paused because of an I/O error (not the user). */
export function pausedByIoError(domain: cmd.Domain | undefined): boolean {
  return domainExists(domain) && domain.state === 'Paused' && domain.reason === 'IOError' && !domain.pausedByUser;
}

export class IoErrorRetry {
  readonly #o: IoErrorRetryOptions;
  readonly #now: () => number;
  readonly #states = new Map<string, RetryState>();

  constructor(now: () => number, options: IoErrorRetryOptions = IO_ERROR_RETRY) {
    this.#now = now;
    this.#o = options;
  }

  /**
   * Called when a reconcile would resume the VMI `uid` whose domain is paused by an I/O error:
   * the milliseconds to wait first, or undefined to resume now.
   */
  delayMs(uid: string): number | undefined {
    const now = this.#now();
    this.#prune(now);
    const state = this.#states.get(uid);
    if (state === undefined) {
      this.#states.set(uid, this.#fresh(now));
      return undefined;
    }
    if (!state.lastRunFailed) {
      if (now >= state.lastRunMs + this.#o.settleMs) {
        this.#states.set(uid, this.#fresh(now));
        return undefined;
      }
      state.lastRunFailed = true;
      // Seen only once the round was already due (no event came in between): it starts now.
    }
    if (now <= state.nextRunMs) return Math.max(1, state.nextRunMs - now);
    state.waitMs = Math.min(state.waitMs * 2, this.#o.maxMs);
    state.nextRunMs = now + state.waitMs;
    state.lastRunMs = now;
    state.lastRunFailed = false;
    return undefined;
  }

  /**
   * For a reconcile that sees the domain running: the milliseconds left before the next resume
   * is due, while the VM is in a retry round. Its view may be stale (qemu paused it again right
   * after a resume), and a Sync then would be a resume outside the pacing. Undefined when the
   * VM is in no round, or has stayed running for `settleMs` since its resume.
   */
  holdMs(uid: string): number | undefined {
    const now = this.#now();
    const state = this.#states.get(uid);
    if (state === undefined) return undefined;
    if (!state.lastRunFailed && now > state.lastRunMs + this.#o.settleMs) {
      this.#states.delete(uid);
      return undefined;
    }
    return now < state.nextRunMs ? state.nextRunMs - now : undefined;
  }

  /** The VMI's local state is gone. */
  forget(uid: string): void {
    this.#states.delete(uid);
  }

  /** Whether the VMI's domain paused again after a resume and waits for the next one. */
  waiting(uid: string): boolean {
    return this.#states.get(uid)?.lastRunFailed === true;
  }

  /** How many VMIs have a retry state (for tests and leak checks). */
  get size(): number {
    return this.#states.size;
  }

  #fresh(now: number): RetryState {
    return { lastRunMs: now, nextRunMs: now + this.#o.initialMs, waitMs: this.#o.initialMs, lastRunFailed: false };
  }

  /** Drops the state of VMs that stayed running after their last resume (KubeVirt's periodic sweep, done lazily). */
  #prune(now: number): void {
    for (const [uid, s] of this.#states) {
      if (!s.lastRunFailed && now > s.lastRunMs + this.#o.settleMs) this.#states.delete(uid);
    }
  }
}
