// The launcher's main wait: for a domain to be defined (up to --qemu-timeout), then for it to be
// gone. A stop request (SIGTERM) starts the graceful shutdown of a running domain. Deletion wins
// over waiting: a stop that finds no running domain — none defined yet, or defined but never
// started (a Sync that fails after the define) — ends the launcher at once instead of waiting
// for a domain that will never come or never go.

import type { Logger } from 'pino';
import type { DomainManager } from './domain-manager.js';
import type { WatchHub } from './watch-hub.js';

export interface WaitForEndOptions {
  readonly manager: DomainManager;
  readonly hub: WatchHub;
  readonly log: Logger;
  readonly qemuTimeoutMs: number;
  /** How long the final state may take to reach every watcher. */
  readonly finalFlushMs: number;
  /** Work that reports on the gone domain (an outgoing migration's outcome), awaited up to finalFlushMs before the flush. */
  readonly settle?: () => Promise<void>;
}

/** Resolves the launcher's exit code. */
export async function waitForEnd(o: WaitForEndOptions, stop: AbortSignal): Promise<number> {
  const { manager, log } = o;
  const stopped = new Promise<'stop'>((resolve) => {
    if (stop.aborted) resolve('stop');
    else stop.addEventListener('abort', () => resolve('stop'), { once: true });
  });
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), o.qemuTimeoutMs)));
  const first = await Promise.race([manager.tracker.defined.then(() => 'defined' as const), stopped, timeout]);
  clearTimeout(timer);
  if (first === 'timeout') {
    log.error({ qemuTimeoutMs: o.qemuTimeoutMs }, 'no domain was defined within the qemu timeout');
    return 1;
  }
  const nothingToStop = new Promise<'nothing-to-stop'>((resolve) => {
    void stopped.then(() => {
      if (manager.beginGracefulShutdown()) return;
      log.info('stop requested, no running domain');
      if (!endingByItself(manager)) resolve('nothing-to-stop');
    });
  });
  const end = await Promise.race([manager.tracker.gone, nothingToStop]);
  manager.grace.stop();
  if (end === 'nothing-to-stop') {
    log.info('stopped before the domain ever ran');
    return 0;
  }
  log.info({ state: end?.state, reason: end?.reason }, 'domain is gone');
  if (o.settle !== undefined) {
    let bound: NodeJS.Timeout | undefined;
    await Promise.race([o.settle(), new Promise<void>((resolve) => (bound = setTimeout(resolve, o.finalFlushMs)))]);
    clearTimeout(bound);
  }
  const flushed = await o.hub.flush(o.finalFlushMs);
  if (!flushed) log.warn('not every watcher received the final state');
  return 0;
}

/** The domain ran and is down: `gone` settles (or has settled) with its final state. */
function endingByItself(manager: DomainManager): boolean {
  return manager.tracker.snapshot()?.deleted === true;
}
