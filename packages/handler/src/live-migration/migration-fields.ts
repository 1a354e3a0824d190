// The `status.migrationState` fields each handler owns, applied to a status read fresh (the
// status writer recomputes on a conflict): the target's endpoint and detection, the source's
// start, mode and outcome. Everything else in the status is kept as read, and nothing is
// applied to a status whose migration is another one than the caller acted for. Progress
// counters (data left, passes) are never written: they change every second, the VMI would see
// a write storm; `kubectl get vmim` shows phases, and the launcher's log the counters.

import { jsonClone, kubeTime, type MigrationAbortStatus, type MigrationMode, type VmiMigrationState, type VmiStatus } from '@podvirt/api';
import type { cmd } from '@podvirt/proto';

export interface TargetFields {
  readonly address?: string;
  readonly ports?: Readonly<Record<string, number>>;
  readonly detectedAtMs?: number;
}

export function withTargetFields(status: VmiStatus, migrationUid: string, f: TargetFields): VmiStatus {
  return patch(status, migrationUid, (ms) => {
    if (f.address !== undefined) ms.targetNodeAddress = f.address;
    if (f.ports !== undefined) ms.targetDirectMigrationNodePorts = { ...f.ports };
    if (f.detectedAtMs !== undefined && ms.targetNodeDomainDetected !== true) {
      ms.targetNodeDomainDetected = true;
      ms.targetNodeDomainReadyTimestamp = kubeTime(f.detectedAtMs);
    }
  });
}

export interface SourceOutcome {
  /** The launcher's report of this migration. */
  readonly progress?: cmd.MigrationProgress;
  /** An end the handler concluded itself (Migrate refused, aborted before the start, launcher gone). */
  readonly ended?: { readonly atMs: number; readonly completed: boolean; readonly reason?: string; readonly abortStatus?: MigrationAbortStatus };
}

export function withSourceFields(status: VmiStatus, migrationUid: string, o: SourceOutcome): VmiStatus {
  return patch(status, migrationUid, (ms) => {
    const p = o.progress;
    if (p !== undefined) {
      ms.startTimestamp ??= kubeTime(Number(p.startedAtMs));
      if (p.mode !== '') ms.mode = p.mode as MigrationMode;
      if (p.abortStatus !== '') ms.abortStatus = p.abortStatus as MigrationAbortStatus;
      if (p.phase === 'Succeeded') end(ms, Number(p.endedAtMs), true);
      if (p.phase === 'Failed') end(ms, Number(p.endedAtMs), false, p.failureReason);
    }
    const e = o.ended;
    if (e !== undefined && ms.completed !== true && ms.failed !== true) {
      if (e.abortStatus !== undefined) ms.abortStatus = e.abortStatus;
      end(ms, e.atMs, e.completed, e.reason);
    }
  });
}

function end(ms: VmiMigrationState, atMs: number, completed: boolean, reason?: string): void {
  ms.endTimestamp ??= kubeTime(atMs);
  if (completed) ms.completed = true;
  else {
    ms.failed = true;
    if (reason !== undefined && reason !== '') ms.failureReason = reason;
  }
}

function patch(status: VmiStatus, migrationUid: string, change: (ms: VmiMigrationState) => void): VmiStatus {
  if (status.migrationState?.migrationUid !== migrationUid) return status;
  const ms = jsonClone(status.migrationState);
  change(ms);
  return { ...status, migrationState: ms };
}
