// The source handler's pure decision for a VMI it owns while a migration names another node:
// start the migration once the target's endpoint is known, cancel it on request, and keep the
// ordinary reconcile (Sync above all, which resumes a domain paused for the switch-over) away
// from a domain that is migrating or has left.

import { kubeTime, type VmiMigrationState } from '@podvirt/api';
import type { cmd } from '@podvirt/proto';
import { LauncherState } from '../launcher/launcher-state.js';
import { domainAlive } from '../launcher/domain-liveness.js';
import { migrationEnded } from './migration-role.js';

export type SourceAction =
  /** Open the source side of the proxy and call the launcher's Migrate. */
  | { readonly type: 'migrate' }
  /** The controller asked to abort a running migration: CancelMigration. */
  | { readonly type: 'cancel' }
  /** Aborted before it started: report it aborted, never start it. */
  | { readonly type: 'abortUnstarted' }
  /** No migration action; `hold` keeps the ordinary Sync and phase away from the domain. */
  | { readonly type: 'none'; readonly hold: boolean; readonly why: string };

export interface SourceInput {
  readonly migrationState: VmiMigrationState;
  readonly launcher: LauncherState;
  readonly domain: cmd.Domain | undefined;
  /** The progress that belongs to this migration (see progressOf), if the launcher has one. */
  readonly progress: cmd.MigrationProgress | undefined;
  /** This handler called Migrate for this migration UID and it has not reported yet. */
  readonly migrateCalled: boolean;
  /** The VMI is being deleted: a running migration is cancelled, none is started. */
  readonly deleting: boolean;
}

export function decideSource(input: SourceInput): SourceAction {
  const { migrationState: ms, launcher, domain, progress } = input;
  const running = progress?.phase === 'Running';
  if (running) {
    if ((ms.abortRequested === true || input.deleting) && !progress.abortRequested) return { type: 'cancel' };
    return { type: 'none', hold: true, why: 'migration running' };
  }
  // The guest left: the target runs it, whatever the launcher here says now.
  if (progress?.phase === 'Succeeded' || ms.completed === true || migratedAway(domain)) return { type: 'none', hold: true, why: 'the guest migrated away' };
  if (migrationEnded(ms) || progress?.phase === 'Failed') return { type: 'none', hold: false, why: 'migration ended; the guest stays here' };
  if (ms.startTimestamp !== undefined || input.migrateCalled) {
    // Started but no progress here: a restarted handler whose launcher already ended, or a
    // Migrate whose first report is on its way. The target's report decides (status), not a guess.
    return { type: 'none', hold: true, why: 'migration started, waiting for its outcome' };
  }
  if (input.deleting) return { type: 'none', hold: false, why: 'the VMI is being deleted' };
  if (ms.abortRequested === true) return { type: 'abortUnstarted' };
  if (ms.targetNodeAddress === undefined || ms.targetDirectMigrationNodePorts === undefined) return { type: 'none', hold: false, why: 'waiting for the target' };
  if (launcher !== LauncherState.Ready || !domainAlive(domain)) return { type: 'none', hold: false, why: 'the domain does not run here' };
  return { type: 'migrate' };
}

/** libvirt's SHUTOFF_MIGRATED (or the deleted domain it left). */
export function migratedAway(domain: cmd.Domain | undefined): boolean {
  return domain !== undefined && domain.state === 'Shutoff' && domain.reason === 'Migrated';
}

/**
 * The launcher's last outgoing migration, when it is this one: the one recorded as started
 * (same start second), or one that runs now (only one can). An ended one with nothing recorded
 * is an earlier migration's.
 */
export function progressOf(ms: VmiMigrationState, domain: cmd.Domain | undefined, called: MigrateCall | undefined): cmd.MigrationProgress | undefined {
  const p = domain?.migration;
  if (p === undefined || p.phase === '') return undefined;
  if (ms.startTimestamp !== undefined) return kubeTime(Number(p.startedAtMs)) === ms.startTimestamp ? p : undefined;
  if (p.phase === 'Running') return p;
  // Reported after this handler's Migrate: another start than the one seen before the call.
  if (called !== undefined && called.previousStartMs !== Number(p.startedAtMs)) return p;
  return undefined;
}

/** What the handler saw when it called Migrate: the start of the launcher's previous migration, if any. */
export interface MigrateCall {
  readonly previousStartMs: number | undefined;
}
