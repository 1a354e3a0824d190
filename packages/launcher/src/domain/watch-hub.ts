import type { cmd } from '@podvirt/proto';

/** Where a watcher's events go: a gRPC server stream in production. */
export interface WatchSink {
  /** false when the transport buffer is full; the hub then waits for `drain`. */
  write(event: cmd.WatchDomainEvent): boolean;
  onDrain(listener: () => void): void;
  end(): void;
}

/** Notices kept per slow watcher before the oldest is dropped; domain snapshots coalesce instead. */
const MAX_PENDING_NOTICES = 64;

class Watcher {
  readonly #sink: WatchSink;
  #pendingDomain: cmd.WatchDomainEvent | undefined;
  readonly #notices: cmd.WatchDomainEvent[] = [];
  #blocked = false;
  #idle: (() => void)[] = [];

  constructor(sink: WatchSink) {
    this.#sink = sink;
    sink.onDrain(() => {
      this.#blocked = false;
      this.#pump();
    });
  }

  push(event: cmd.WatchDomainEvent): void {
    if (event.event?.$case === 'notice') {
      this.#notices.push(event);
      if (this.#notices.length > MAX_PENDING_NOTICES) this.#notices.shift();
    } else {
      // A slow watcher only needs the latest snapshot, not every intermediate one.
      this.#pendingDomain = event;
    }
    this.#pump();
  }

  get idle(): boolean {
    return this.#pendingDomain === undefined && this.#notices.length === 0;
  }

  whenIdle(): Promise<void> {
    if (this.idle) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  #pump(): void {
    while (!this.#blocked) {
      // Snapshot first: a notice is about the state the snapshot already shows.
      const next = this.#pendingDomain ?? this.#notices.shift();
      if (next === undefined) break;
      if (next === this.#pendingDomain) this.#pendingDomain = undefined;
      if (!this.#sink.write(next)) this.#blocked = true;
    }
    if (this.idle && !this.#blocked) for (const resolve of this.#idle.splice(0)) resolve();
  }

  end(): void {
    for (const resolve of this.#idle.splice(0)) resolve();
    this.#sink.end();
  }
}

/**
 * Fans the domain's snapshots and notices out to every WatchDomain stream: a new watcher gets
 * the current snapshot first; a slow watcher never blocks the others (snapshots coalesce to
 * the latest, notices are bounded).
 */
export class WatchHub {
  readonly #watchers = new Set<Watcher>();
  #current: cmd.WatchDomainEvent = { event: { $case: 'noDomain', value: {} } };

  get current(): cmd.WatchDomainEvent {
    return this.#current;
  }

  get size(): number {
    return this.#watchers.size;
  }

  publish(event: cmd.WatchDomainEvent): void {
    if (event.event?.$case !== 'notice') this.#current = event;
    for (const w of this.#watchers) w.push(event);
  }

  /** Returns the function that removes the watcher (call it when the stream is cancelled). */
  subscribe(sink: WatchSink): () => void {
    const watcher = new Watcher(sink);
    this.#watchers.add(watcher);
    watcher.push(this.#current);
    return () => {
      this.#watchers.delete(watcher);
    };
  }

  /** Resolves when every watcher has handed everything published so far to its transport, or at the timeout. */
  async flush(timeoutMs: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
      timer.unref();
    });
    const all = Promise.all([...this.#watchers].map((w) => w.whenIdle())).then(() => true);
    try {
      return await Promise.race([all, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Ends every stream (the launcher is exiting). Idempotent. */
  close(): void {
    for (const w of this.#watchers) w.end();
    this.#watchers.clear();
  }
}
