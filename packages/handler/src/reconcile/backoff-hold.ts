// Keeps a failing key's retry backoff in force while other parties update its VMI. Without it
// every status write by the controller (or by the handler itself) re-queued the key at once,
// so a Sync that always fails was retried on each watch event and the backoff never applied.
// Only a change the handler must act on now passes: a new VMI under the key, a deletion, a
// new spec, a new launcher pod or a move to another node.

import { NODE_NAME_LABEL, type VirtualMachineInstance } from '@podvirt/api';

interface Held {
  readonly untilMs: number;
  readonly fingerprint: string | undefined;
}

export class BackoffHold {
  readonly #now: () => number;
  readonly #held = new Map<string, Held>();

  constructor(now: () => number) {
    this.#now = now;
  }

  /** The key failed with `vmi` as the handler saw it; its retry is due in `retryInMs`. */
  hold(key: string, vmi: VirtualMachineInstance | undefined, retryInMs: number): void {
    this.#held.set(key, { untilMs: this.#now() + retryInMs, fingerprint: fingerprint(vmi) });
  }

  /** The key succeeded. */
  release(key: string): void {
    this.#held.delete(key);
  }

  /** Whether this update of the VMI should wait for the key's pending retry instead of running now. */
  holds(key: string, vmi: VirtualMachineInstance): boolean {
    const held = this.#held.get(key);
    if (held === undefined) return false;
    if (this.#now() >= held.untilMs) {
      this.#held.delete(key);
      return false;
    }
    return held.fingerprint !== undefined && held.fingerprint === fingerprint(vmi);
  }
}

/** What of a VMI makes the handler act: status, annotations and resourceVersion are not in it. */
function fingerprint(vmi: VirtualMachineInstance | undefined): string | undefined {
  if (vmi === undefined) return undefined;
  const m = vmi.metadata;
  return JSON.stringify([m.uid, m.deletionTimestamp ?? null, m.labels?.[NODE_NAME_LABEL] ?? null, vmi.status?.nodeName ?? null, vmi.status?.activePods ?? null, vmi.spec]);
}
