// The node heartbeat, as virt-handler keeps it: the Node is labelled unschedulable for VMIs
// until the handler is ready; then every interval (with jitter, so a fleet of handlers does
// not patch in lockstep) it sets kubevirt.io/schedulable=true and stamps kubevirt.io/heartbeat
// with the RFC 3339 time. The controller side treats a stale stamp as a dead handler.
// close() stops the beat and labels the node unschedulable again.

import { HEARTBEAT_ANNOTATION, kubeTime, NODE_SCHEDULABLE_LABEL } from '@podvirt/api';
import type { Logger } from 'pino';
import type { NodePatcher } from './node-patcher.js';

// virt-handler: wait.JitterUntil(heartBeat, 1 minute, 1.2, sliding): every 1 to 2.2 minutes.
export const HEARTBEAT_INTERVAL_MS = 60_000;
export const HEARTBEAT_JITTER = 1.2;
// Bounds the unschedulable patch at shutdown: a DaemonSet pod has 30 s before SIGKILL.
const UNSCHEDULABLE_TIMEOUT_MS = 5_000;

export interface HeartbeatOptions {
  readonly nodeName: string;
  readonly patcher: NodePatcher;
  readonly log: Logger;
  readonly now?: () => number;
  readonly intervalMs?: number;
  readonly jitter?: number;
  /** In [0, 1); injectable so tests know the delay. */
  readonly random?: () => number;
}

export class Heartbeat {
  readonly #o: HeartbeatOptions;
  readonly #abort = new AbortController();
  #timer: NodeJS.Timeout | undefined;
  #beating: Promise<void> | undefined;
  #started = false;
  #closing: Promise<void> | undefined;
  #lastBeatMs: number | undefined;

  constructor(options: HeartbeatOptions) {
    this.#o = options;
  }

  /** When the last successful beat was sent, if any. */
  get lastBeatMs(): number | undefined {
    return this.#lastBeatMs;
  }

  /** Labels the node unschedulable; a failure is logged, never thrown (the beat repairs it). */
  async markUnschedulable(signal: AbortSignal = AbortSignal.timeout(UNSCHEDULABLE_TIMEOUT_MS)): Promise<boolean> {
    try {
      await this.#o.patcher.patchMetadata(this.#o.nodeName, { labels: { [NODE_SCHEDULABLE_LABEL]: 'false' } }, signal);
      return true;
    } catch (err) {
      this.#o.log.warn({ err }, 'labelling the node unschedulable failed');
      return false;
    }
  }

  /** The handler is ready: beat now, then keep beating until close(). Idempotent. */
  start(): void {
    if (this.#started || this.#abort.signal.aborted) return;
    this.#started = true;
    this.#beat();
  }

  /** Stops beating, waits for a beat in flight, and labels the node unschedulable. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#abort.abort();
      clearTimeout(this.#timer);
      await this.#beating;
      await this.markUnschedulable();
    })();
    return this.#closing;
  }

  #beat(): void {
    this.#beating = this.#once().finally(() => {
      this.#beating = undefined;
      if (this.#abort.signal.aborted) return;
      // Sliding: the next period starts after this beat finished, as JitterUntil(sliding=true).
      this.#timer = setTimeout(() => this.#beat(), this.#nextDelayMs());
      this.#timer.unref();
    });
  }

  async #once(): Promise<void> {
    const nowMs = (this.#o.now ?? Date.now)();
    const patch = {
      labels: { [NODE_SCHEDULABLE_LABEL]: 'true' },
      annotations: { [HEARTBEAT_ANNOTATION]: kubeTime(nowMs) },
    };
    try {
      await this.#o.patcher.patchMetadata(this.#o.nodeName, patch, this.#abort.signal);
      this.#lastBeatMs = nowMs;
      this.#o.log.debug({ at: patch.annotations[HEARTBEAT_ANNOTATION] }, 'heartbeat');
    } catch (err) {
      if (!this.#abort.signal.aborted) this.#o.log.warn({ err }, 'heartbeat failed');
    }
  }

  #nextDelayMs(): number {
    const interval = this.#o.intervalMs ?? HEARTBEAT_INTERVAL_MS;
    const jitter = this.#o.jitter ?? HEARTBEAT_JITTER;
    return interval + Math.floor((this.#o.random ?? Math.random)() * jitter * interval);
  }
}
