// The thin, acting half of the reconcile loop: carries out one Action against the VMI's
// launcher and records the Events KubeVirt records for it. Failures come back as an Outcome so
// the status (Synchronized=False) is still written before the key is retried.

import { decodeVmi, EventReason, EventType, type VirtualMachineInstance } from '@podvirt/api';
import type { Logger } from 'pino';
import { HandlerError, isHandlerError } from '../handler-error.js';
import type { LauncherObservation, LauncherRegistry } from '../launcher/launcher-registry.js';
import type { PodNetworkPhase } from '../network/pod-network-phase.js';
import type { Action } from './action.js';
import type { SyncFailure } from './compute-status.js';
import { domainExists } from '../launcher/domain-liveness.js';
import { syncFailure } from './sync-failure.js';

export type RecordEvent = (type: string, reason: string, message: string) => Promise<void>;

export interface ExecuteContext {
  readonly uid: string;
  /** The VMI, or its last known state when it is gone from the cluster. */
  readonly vmi: VirtualMachineInstance;
  readonly observation: LauncherObservation;
  readonly registry: LauncherRegistry;
  readonly record: RecordEvent;
  readonly log: Logger;
  readonly signal: AbortSignal;
  /** Absent where no launcher runs in a pod (unit tests with fake launchers). */
  readonly network?: PodNetworkPhase;
  /** Gives the worker back while the rest of this reconcile waits on the launcher. */
  readonly park?: () => void;
}

export interface Outcome {
  readonly syncFailure?: SyncFailure;
  /** Retry the key with backoff after the status is written. */
  readonly error?: unknown;
  readonly requeueAfterMs?: number;
}

export async function executeAction(action: Action, ctx: ExecuteContext): Promise<Outcome> {
  switch (action.type) {
    case 'sync':
      return sync(ctx);
    case 'shutdown': {
      if (action.send) await launcher(ctx).shutdown(vmiJson(ctx.vmi), ctx.signal);
      // Only the first attempt is an Event: re-sends would trip the API server's spam filter.
      if (action.first) await ctx.record(EventType.Normal, EventReason.ShuttingDown, 'Signaled Graceful Shutdown');
      return { requeueAfterMs: action.requeueAfterMs };
    }
    case 'kill':
      await launcher(ctx).kill(vmiJson(ctx.vmi), ctx.signal);
      await ctx.record(EventType.Normal, EventReason.Deleted, 'VirtualMachineInstance stopping');
      return { requeueAfterMs: action.requeueAfterMs };
    case 'delete':
      return remove(action.undefine, action.cleanup, ctx);
    case 'updateStatus':
      return {};
    case 'nothing':
      return action.requeueAfterMs === undefined ? {} : { requeueAfterMs: action.requeueAfterMs };
  }
}

async function sync(ctx: ExecuteContext): Promise<Outcome> {
  try {
    // Checked here first so a bad spec is named precisely without a round trip.
    const decoded = decodeVmi(ctx.vmi);
    // The tap, bridge and NAT must be there before the launcher defines the domain on the tap.
    await ctx.network?.ensure(decoded, ctx.signal, ctx.observation.connection?.client.socketPath);
    // Defining and starting a domain takes the launcher seconds under load (qemu's start): the
    // reconcile goes on without its worker, so other VMIs' Syncs do not queue behind this one.
    if (!domainExists(ctx.observation.domain)) ctx.park?.();
    const domain = await launcher(ctx).sync(vmiJson(ctx.vmi), ctx.signal);
    ctx.observation.connection?.observe(domain);
    if (!domainExists(ctx.observation.domain) && domainExists(domain)) {
      await ctx.record(EventType.Normal, EventReason.Created, 'VirtualMachineInstance defined.');
    }
    return {};
  } catch (err) {
    if (isHandlerError(err, 'HANDLER_ERR_ABORTED')) throw err;
    const failure = syncFailure(err);
    ctx.log.warn({ err, fatalReason: failure.fatalReason }, 'sync failed');
    await ctx.record(EventType.Warning, EventReason.SyncFailed, failure.message);
    // A failure retrying cannot cure fails the VMI (written next) and is not retried.
    return failure.fatalReason === undefined ? { syncFailure: failure, error: err } : { syncFailure: failure };
  }
}

async function remove(undefine: boolean, cleanup: boolean, ctx: ExecuteContext): Promise<Outcome> {
  if (undefine) {
    try {
      await launcher(ctx).delete(vmiJson(ctx.vmi), ctx.signal);
      await ctx.record(EventType.Normal, EventReason.Deleted, 'Signaled Deletion');
    } catch (err) {
      // A launcher that went away meanwhile took its domain with it; cleanup still proceeds.
      if (!cleanup || isHandlerError(err, 'HANDLER_ERR_ABORTED')) throw err;
      ctx.log.info({ err }, 'undefine failed, cleaning up anyway');
    }
  }
  if (cleanup) {
    ctx.network?.forget(ctx.uid);
    await ctx.registry.release(ctx.uid);
  }
  return {};
}

function launcher(ctx: ExecuteContext) {
  const conn = ctx.observation.connection;
  if (conn === undefined) throw new HandlerError('HANDLER_ERR_NO_LAUNCHER_SOCKET', 'no launcher connection for this VMI');
  return conn.client;
}

function vmiJson(vmi: VirtualMachineInstance): Buffer {
  return Buffer.from(JSON.stringify(vmi));
}
