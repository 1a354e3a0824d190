// Named readiness checks: /readyz answers 200 only when every check holds, and says which do
// not. The handler registers "informer-synced", "node-api-listening" and, with device plugins on, "device-plugins-registered".

export type ReadinessCheck = () => boolean;

export interface ReadinessReport {
  readonly ready: boolean;
  readonly failing: readonly string[];
}

export class Readiness {
  readonly #checks = new Map<string, ReadinessCheck>();
  #shuttingDown = false;

  add(name: string, check: ReadinessCheck): void {
    this.#checks.set(name, check);
  }

  /** A stopping handler is no longer ready, whatever the checks say. */
  markShuttingDown(): void {
    this.#shuttingDown = true;
  }

  report(): ReadinessReport {
    const failing = [...this.#checks].filter(([, check]) => !check()).map(([name]) => name);
    if (this.#shuttingDown) failing.unshift('shutting-down');
    return { ready: failing.length === 0, failing };
  }
}
