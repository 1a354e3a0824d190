// Names for (state, reason) pairs: the reason table depends on the state.
import {
  BlockedReason, CrashedReason, DomainState, NostateReason, PausedReason, PMSuspendedReason, RunningReason,
  ShutdownReason, ShutoffReason,
} from './gen/constants.js';
import type {
  BlockedReasonName, CrashedReasonName, DomainStateName, NostateReasonName, PausedReasonName, PMSuspendedReasonName,
  RunningReasonName, ShutdownReasonName, ShutoffReasonName,
} from './gen/constants.js';
import { enumName } from './enum-name.js';

export type StateReasonName =
  | NostateReasonName | RunningReasonName | BlockedReasonName | PausedReasonName | ShutdownReasonName
  | ShutoffReasonName | CrashedReasonName | PMSuspendedReasonName;

export interface DomainStateInfo {
  readonly state: DomainStateName | 'UNKNOWN';
  /** Named from the reason table of `state`, e.g. SHUTOFF + 1 → DESTROYED. */
  readonly reason: StateReasonName | 'UNKNOWN';
  readonly stateCode: number;
  readonly reasonCode: number;
}

const REASONS: Readonly<Record<DomainStateName, Readonly<Record<string, number>>>> = {
  NOSTATE: NostateReason,
  RUNNING: RunningReason,
  BLOCKED: BlockedReason,
  PAUSED: PausedReason,
  SHUTDOWN: ShutdownReason,
  SHUTOFF: ShutoffReason,
  CRASHED: CrashedReason,
  PMSUSPENDED: PMSuspendedReason,
};

export function nameDomainState(stateCode: number, reasonCode: number): DomainStateInfo {
  const state = enumName(DomainState, stateCode);
  const reason = state === 'UNKNOWN' ? 'UNKNOWN' : enumName(REASONS[state], reasonCode);
  return { state, reason: reason as StateReasonName | 'UNKNOWN', stateCode, reasonCode };
}
