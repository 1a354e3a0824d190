// The VMI status as virt-handler writes it, computed purely from the VMI, the domain, the
// launcher's state and this pass's sync error. The caller writes it only when it differs.
// The Ready condition is not ours: the controller derives it from the launcher pod, as
// virt-controller does, so the two never overwrite each other.

import {
  ConditionStatus,
  isFinalPhase,
  jsonClone,
  kubeTime,
  removeCondition,
  upsertCondition,
  VmiConditionReason,
  VmiConditionType,
  VmiPhase,
  type DefaultedVmi,
  type VirtualMachineInstance,
  type VmiCondition,
  type VmiStatus,
} from '@podvirt/api';
import type { cmd } from '@podvirt/proto';
import type { LauncherGone } from '../launcher/launcher-connection.js';
import type { LauncherState } from '../launcher/launcher-state.js';
import { computePhase } from './compute-phase.js';
import { domainAlive, domainExists, effectiveDomain } from '../launcher/domain-liveness.js';
import { applyDomainFields } from './domain-status-fields.js';
import { liveMigratability } from './live-migratable.js';

export interface SyncFailure {
  /** The error text, naming the field when the VMI is at fault. */
  readonly message: string;
  /** Set when retrying cannot help: the VMI goes Failed with this as status.reason. */
  readonly fatalReason?: string;
}

export interface StatusInput {
  readonly vmi: VirtualMachineInstance;
  /** Its spec as decoded (defaulted-vmis.ts); undefined when it does not decode. */
  readonly defaulted: DefaultedVmi | undefined;
  readonly domain: cmd.Domain | undefined;
  readonly launcher: LauncherState;
  readonly syncFailure?: SyncFailure | undefined;
  /** Why the launcher was declared gone, when it was. */
  readonly launcherGone?: LauncherGone | undefined;
  readonly nowMs: number;
}

/** `status.reason` of a VMI failed because its launcher is gone. */
export const LauncherGoneReason = {
  /** The launcher's socket refuses connections or vanished: the launcher process exited. */
  exited: 'LauncherExited',
  /** The launcher did not answer for the watchdog timeout, confirmed by a fresh call. */
  silent: 'LauncherUnresponsive',
} as const;

const PAUSE_REASONS: Readonly<Record<string, string>> = {
  User: VmiConditionReason.PausedByUser,
  IOError: VmiConditionReason.PausedIOError,
};

export function computeStatus(input: StatusInput): VmiStatus {
  const { vmi, defaulted, launcher, syncFailure, nowMs } = input;
  const domain = effectiveDomain(input.domain, launcher);
  const old = vmi.status ?? {};
  if (isFinalPhase(old.phase)) return old;
  const status: VmiStatus = jsonClone(old);
  const now = kubeTime(nowMs);
  if (domain !== undefined) applyDomainFields(status, vmi, domain);

  const phase = syncFailure?.fatalReason === undefined ? computePhase(vmi, defaulted, domain, launcher) : VmiPhase.Failed;
  if (syncFailure?.fatalReason !== undefined) status.reason = syncFailure.fatalReason;
  else if (phase === VmiPhase.Failed && input.launcherGone !== undefined && status.reason === undefined) {
    status.reason = input.launcherGone === 'silent' ? LauncherGoneReason.silent : LauncherGoneReason.exited;
  }

  let conditions: VmiCondition[] = status.conditions ?? [];
  conditions = pausedCondition(conditions, domain, now);
  conditions = domainAlive(domain) && domain.agentConnected
    ? upsertCondition(conditions, { type: VmiConditionType.AgentConnected, status: ConditionStatus.True }, now)
    : removeCondition(conditions, VmiConditionType.AgentConnected);
  // A VMI that no longer decodes keeps the condition it had.
  if (domainAlive(domain) && defaulted !== undefined) {
    const migratable = liveMigratability(defaulted);
    conditions = upsertCondition(conditions, migratable.condition, now);
    status.migrationMethod = migratable.method;
  }
  conditions = syncFailure === undefined
    ? removeCondition(conditions, VmiConditionType.Synchronized)
    : upsertCondition(conditions, {
      type: VmiConditionType.Synchronized,
      status: ConditionStatus.False,
      reason: VmiConditionReason.SynchronizingFailed,
      message: syncFailure.message,
    }, now);
  if (conditions.length > 0) status.conditions = conditions;
  else delete status.conditions;

  if (phase !== (old.phase ?? VmiPhase.Unset)) {
    status.phaseTransitionTimestamps = [...(status.phaseTransitionTimestamps ?? []), { phase, phaseTransitionTimestamp: now }];
  }
  status.phase = phase;
  return status;
}

function pausedCondition(conditions: VmiCondition[], domain: cmd.Domain | undefined, now: string): VmiCondition[] {
  const reason = domainExists(domain) && domain.state === 'Paused'
    ? (domain.pausedByUser ? VmiConditionReason.PausedByUser : PAUSE_REASONS[domain.reason])
    : undefined;
  if (reason === undefined) return removeCondition(conditions, VmiConditionType.Paused);
  return upsertCondition(conditions, { type: VmiConditionType.Paused, status: ConditionStatus.True, reason }, now);
}
