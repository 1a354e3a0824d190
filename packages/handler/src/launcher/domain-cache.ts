// The last domain each launcher reported, keyed by VMI UID. It outlives the launcher's
// connection on purpose: once qemu is gone and the launcher exits, the final state (Shutoff /
// Shutdown, Crashed ...) is still what decides Succeeded or Failed.

import type { cmd } from '@podvirt/proto';

export interface CachedDomain {
  /** The VMI key the domain belongs to. */
  readonly key: string;
  /** Undefined when the launcher reported that no domain is defined. */
  readonly domain: cmd.Domain | undefined;
}

const NO_STATE = new Set(['', 'NoState']);
const DOWN = new Set(['Shutoff', 'Crashed']);

export class DomainCache {
  readonly #entries = new Map<string, CachedDomain>();

  get(uid: string): CachedDomain | undefined {
    return this.#entries.get(uid);
  }

  /** Records a snapshot; returns whether anything a reconcile looks at changed. */
  set(uid: string, key: string, domain: cmd.Domain | undefined): boolean {
    const previous = this.#entries.get(uid);
    const next = mergeDeleted(previous?.domain, domain);
    this.#entries.set(uid, { key, domain: next });
    return previous === undefined || !sameDomain(previous.domain, next);
  }

  delete(uid: string): void {
    this.#entries.delete(uid);
  }

  uids(): string[] {
    return [...this.#entries.keys()];
  }
}

/**
 * An undefine reports a deleted domain without a state; keep the last real state and reason so
 * the phase still comes from how the guest stopped.
 */
function mergeDeleted(previous: cmd.Domain | undefined, next: cmd.Domain | undefined): cmd.Domain | undefined {
  if (previous === undefined || !DOWN.has(previous.state)) return next;
  if (next === undefined) return { ...previous, deleted: true };
  if (next.deleted && NO_STATE.has(next.state)) return { ...next, state: previous.state, reason: previous.reason };
  return next;
}

function sameDomain(a: cmd.Domain | undefined, b: cmd.Domain | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  const { observedAtMs: _a, ...restA } = a;
  const { observedAtMs: _b, ...restB } = b;
  return JSON.stringify(restA) === JSON.stringify(restB);
}
