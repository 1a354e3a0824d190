// Records core/v1 Events the way client-go's recorder does: a repeat of the same event (same
// object, type, reason and message) bumps `count` and `lastTimestamp` on the Event already
// written instead of adding one, so a retry loop does not flood the namespace. Recording never
// throws: an Event is worth a log line, not a failed reconcile. As client-go's spam filter does,
// each object gets a bucket of 25 Events refilled at one per 5 minutes; beyond it Events are
// dropped (and that is logged once), so a loop on one object cannot flood the API server. The
// controller and the handler both record through it.

import { kubeTime, type ObjectReference } from '@podvirt/api';
import { eventName } from './event-name.js';
import type { CoreEvent, EventSink } from './event-sink.js';
import { isKubeApiError } from './kube-api-error.js';

export interface EventRecorderOptions<T> {
  readonly sink: EventSink;
  /** The reference an Event names for an object (`involvedObject`). */
  readonly reference: (obj: T) => ObjectReference;
  /** `source.component` and `reportingComponent`. */
  readonly component: string;
  /** `reportingInstance`: the replica or node that writes. */
  readonly instance: string;
  /** `source.host`: the node, for node agents. */
  readonly host?: string;
  readonly log: { warn(obj: object, msg: string): void };
  readonly now: () => number;
  /** How many distinct events are remembered for folding (client-go keeps 4096). */
  readonly maxEntries?: number;
}

interface Seen {
  readonly namespace: string;
  readonly name: string;
  count: number;
}

const DEFAULT_MAX_ENTRIES = 4096;
const DEFAULT_CLOSE_MS = 2_000;
// client-go's EventSourceObjectSpamFilter: burst 25, one token back every 300 s.
const EVENT_BURST = 25;
const EVENT_REFILL_MS = 300_000;

/** An object's Events still allowed, as of `atMs`. */
interface Bucket {
  tokens: number;
  atMs: number;
  /** Whether the drop that emptied it was logged. */
  told: boolean;
}

export class EventRecorder<T> {
  readonly #o: EventRecorderOptions<T>;
  readonly #seen = new Map<string, Seen>();
  readonly #buckets = new Map<string, Bucket>();
  /** Writes of one folding key run in order, so a repeat never races its first create. */
  readonly #chains = new Map<string, Promise<void>>();
  #sequence = 0n;
  readonly #abort = new AbortController();

  constructor(options: EventRecorderOptions<T>) {
    this.#o = options;
  }

  record(obj: T, type: string, reason: string, message: string): Promise<void> {
    if (this.#abort.signal.aborted) return Promise.resolve();
    const ref = this.#o.reference(obj);
    if (!this.#take(ref, reason)) return Promise.resolve();
    const key = JSON.stringify([ref.namespace, ref.name, ref.uid, type, reason, message]);
    const previous = this.#chains.get(key) ?? Promise.resolve();
    const next = previous.then(() => this.#write(key, ref, type, reason, message));
    this.#chains.set(key, next);
    void next.finally(() => {
      if (this.#chains.get(key) === next) this.#chains.delete(key);
    });
    return next;
  }

  /** Waits for pending writes up to `timeoutMs`, then abandons them. Idempotent. */
  async close(timeoutMs = DEFAULT_CLOSE_MS): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, timeoutMs);
    });
    await Promise.race([Promise.allSettled([...this.#chains.values()]), timeout]);
    clearTimeout(timer);
    this.#abort.abort();
  }

  async #write(key: string, ref: ObjectReference, type: string, reason: string, message: string): Promise<void> {
    const now = kubeTime(this.#o.now());
    const seen = this.#seen.get(key);
    try {
      if (seen !== undefined) {
        try {
          await this.#o.sink.patchCount(seen.namespace, seen.name, { count: seen.count + 1, lastTimestamp: now, message }, this.#abort.signal);
          seen.count += 1;
          this.#remember(key, seen);
          return;
        } catch (err) {
          // Events expire (1 h by default); a vanished one is simply created afresh.
          if (!isKubeApiError(err, 'KUBE_ERR_NOT_FOUND')) throw err;
        }
      }
      const created = await this.#o.sink.create(this.#event(ref, type, reason, message, now), this.#abort.signal);
      this.#remember(key, { namespace: created.metadata.namespace, name: created.metadata.name, count: created.count });
    } catch (err) {
      this.#o.log.warn({ err, reason, object: `${ref.namespace}/${ref.name}` }, 'recording event failed');
    }
  }

  /** A token from the object's bucket; false when it is empty (the Event is dropped). */
  #take(ref: ObjectReference, reason: string): boolean {
    const key = JSON.stringify([ref.kind, ref.namespace, ref.name, ref.uid]);
    const now = this.#o.now();
    const bucket = this.#buckets.get(key) ?? { tokens: EVENT_BURST, atMs: now, told: false };
    const refilled = Math.floor((now - bucket.atMs) / EVENT_REFILL_MS);
    if (refilled > 0) {
      bucket.tokens = Math.min(EVENT_BURST, bucket.tokens + refilled);
      bucket.atMs = bucket.tokens === EVENT_BURST ? now : bucket.atMs + refilled * EVENT_REFILL_MS;
    }
    this.#buckets.delete(key);
    this.#buckets.set(key, bucket);
    for (const oldest of this.#buckets.keys()) {
      if (this.#buckets.size <= (this.#o.maxEntries ?? DEFAULT_MAX_ENTRIES)) break;
      this.#buckets.delete(oldest);
    }
    if (bucket.tokens > 0) {
      bucket.tokens -= 1;
      bucket.told = false;
      return true;
    }
    if (!bucket.told) {
      bucket.told = true;
      this.#o.log.warn({ object: `${ref.namespace}/${ref.name}`, reason }, `more than ${EVENT_BURST} Events for this object: dropping them until the rate falls to one per ${EVENT_REFILL_MS / 60_000} minutes`);
    }
    return false;
  }

  #remember(key: string, seen: Seen): void {
    this.#seen.delete(key);
    this.#seen.set(key, seen);
    const max = this.#o.maxEntries ?? DEFAULT_MAX_ENTRIES;
    for (const oldest of this.#seen.keys()) {
      if (this.#seen.size <= max) break;
      this.#seen.delete(oldest);
    }
  }

  #event(ref: ObjectReference, type: string, reason: string, message: string, now: string): CoreEvent {
    // client-go names events <object>.<unix nanoseconds in hex> (the object's name cut to fit);
    // a sequence keeps two events of the same millisecond apart.
    const nanos = BigInt(this.#o.now()) * 1_000_000n + (this.#sequence++ % 1_000_000n);
    const { component, host, instance } = this.#o;
    return {
      apiVersion: 'v1',
      kind: 'Event',
      // A cluster-scoped object's Events (a Node's) live in `default`, as client-go files them.
      metadata: { name: eventName(ref.name, nanos.toString(16)), namespace: ref.namespace === '' ? 'default' : ref.namespace },
      involvedObject: ref,
      reason,
      message,
      type,
      source: host === undefined ? { component } : { component, host },
      count: 1,
      firstTimestamp: now,
      lastTimestamp: now,
      reportingComponent: component,
      reportingInstance: instance,
    };
  }
}
