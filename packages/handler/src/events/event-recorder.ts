// Records core/v1 Events against VMIs the way client-go's recorder does for virt-handler:
// source component and host set, and a repeat of the same event (same object, type, reason
// and message) bumps `count` and `lastTimestamp` on the existing Event instead of adding one.
// Recording never throws: an Event is worth a log line, not a failed reconcile.

import type { VirtualMachineInstance } from '@podvirt/api';
import { VMI_API_VERSION, VMI_KIND } from '@podvirt/api';
import { eventName } from '@podvirt/kube-runtime';
import type { Logger } from 'pino';
import { isHandlerError } from '../handler-error.js';
import type { CoreEvent, EventApi, ObjectReference } from '../kube/event-api.js';
import { toKubeTime } from '../reconcile/conditions.js';

export const EVENT_SOURCE_COMPONENT = 'virt-handler';

export interface EventRecorderOptions {
  readonly api: EventApi;
  readonly host: string;
  readonly log: Logger;
  readonly now: () => number;
  /** How many distinct events are remembered for aggregation (client-go keeps 4096). */
  readonly maxEntries?: number;
}

interface Seen {
  readonly namespace: string;
  readonly name: string;
  readonly firstTimestamp: string;
  count: number;
}

export class EventRecorder {
  readonly #o: EventRecorderOptions;
  readonly #seen = new Map<string, Seen>();
  /** Writes of one aggregation key run in order so a repeat never races its first create. */
  readonly #chains = new Map<string, Promise<void>>();
  #sequence = 0n;
  readonly #abort = new AbortController();

  constructor(options: EventRecorderOptions) {
    this.#o = options;
  }

  record(vmi: VirtualMachineInstance, type: string, reason: string, message: string): Promise<void> {
    if (this.#abort.signal.aborted) return Promise.resolve();
    const ref = reference(vmi);
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
  async close(timeoutMs = 2_000): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, timeoutMs);
    });
    await Promise.race([Promise.allSettled([...this.#chains.values()]), timeout]);
    clearTimeout(timer);
    this.#abort.abort();
  }

  async #write(key: string, ref: ObjectReference, type: string, reason: string, message: string): Promise<void> {
    const now = toKubeTime(this.#o.now());
    const seen = this.#seen.get(key);
    try {
      if (seen !== undefined) {
        const patch = { count: seen.count + 1, lastTimestamp: now, message };
        try {
          await this.#o.api.patchCount(seen.namespace, seen.name, patch, this.#abort.signal);
          seen.count += 1;
          this.#remember(key, seen);
          return;
        } catch (err) {
          // Events expire (1 h by default); a vanished one is simply created afresh.
          if (!isHandlerError(err, 'HANDLER_ERR_KUBE_NOT_FOUND')) throw err;
        }
      }
      const created = await this.#o.api.create(this.#event(ref, type, reason, message, now), this.#abort.signal);
      this.#remember(key, { namespace: created.metadata.namespace, name: created.metadata.name, firstTimestamp: now, count: created.count });
    } catch (err) {
      this.#o.log.warn({ err, reason, object: `${ref.namespace}/${ref.name}` }, 'recording event failed');
    }
  }

  #remember(key: string, seen: Seen): void {
    this.#seen.delete(key);
    this.#seen.set(key, seen);
    const max = this.#o.maxEntries ?? 4096;
    for (const oldest of this.#seen.keys()) {
      if (this.#seen.size <= max) break;
      this.#seen.delete(oldest);
    }
  }

  #event(ref: ObjectReference, type: string, reason: string, message: string, now: string): CoreEvent {
    // client-go names events <object>.<unix nanoseconds in hex> (the object's name cut to fit);
    // a sequence keeps two events of the same millisecond apart.
    const nanos = BigInt(this.#o.now()) * 1_000_000n + (this.#sequence++ % 1_000_000n);
    return {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: eventName(ref.name, nanos.toString(16)), namespace: ref.namespace },
      involvedObject: ref,
      reason,
      message,
      type,
      source: { component: EVENT_SOURCE_COMPONENT, host: this.#o.host },
      count: 1,
      firstTimestamp: now,
      lastTimestamp: now,
      reportingComponent: EVENT_SOURCE_COMPONENT,
      reportingInstance: this.#o.host,
    };
  }
}

function reference(vmi: VirtualMachineInstance): ObjectReference {
  return {
    apiVersion: VMI_API_VERSION,
    kind: VMI_KIND,
    namespace: vmi.metadata.namespace ?? 'default',
    name: vmi.metadata.name ?? '',
    uid: vmi.metadata.uid ?? '',
    ...(vmi.metadata.resourceVersion === undefined ? {} : { resourceVersion: vmi.metadata.resourceVersion }),
  };
}
