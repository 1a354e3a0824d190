// The target handler's pure decision for a VMI migrating to this node (before the hand-over):
// prepare the target launcher and open the endpoint once; report the domain once it runs here
// after the switch; let everything go when the migration ended without moving the guest.

import type { VmiMigrationState } from '@podvirt/api';
import type { cmd } from '@podvirt/proto';
import { LauncherState } from '../launcher/launcher-state.js';
import { domainAlive, domainExists } from '../launcher/domain-liveness.js';
import { LAUNCHER_INIT_POLL_MS, LAUNCHER_WAIT_MS } from '../launcher/launcher-waits.js';
import { migrationEnded } from './migration-role.js';

export type TargetAction =
  /** Pod network, PrepareMigrationTarget, then the TLS listeners; their address and ports are written. */
  | { readonly type: 'prepare' }
  /**
   * The guest runs here after the switch (a guest the user paused arrives paused by the user):
   * targetNodeDomainDetected + its timestamp. An incoming domain is paused for the migration.
   */
  | { readonly type: 'detected' }
  /** The migration ended without the guest moving here (or the launcher is gone): close the endpoint. */
  | { readonly type: 'close'; readonly why: string }
  | { readonly type: 'nothing'; readonly why: string; readonly requeueAfterMs?: number };

export interface TargetInput {
  readonly migrationState: VmiMigrationState;
  readonly launcher: LauncherState;
  readonly domain: cmd.Domain | undefined;
  /** An endpoint is open here for this migration UID. */
  readonly endpointOpen: boolean;
}

export function decideTarget(input: TargetInput): TargetAction {
  const { migrationState: ms, launcher, domain } = input;
  if (ms.failed === true) return { type: 'close', why: 'the migration failed' };
  const runsHere = domainAlive(domain) && (domain.state === 'Running' || (domain.state === 'Paused' && domain.reason === 'User'));
  // Completed: the guest runs here; only the detection may still be missing.
  if (runsHere && ms.targetNodeDomainDetected !== true) return { type: 'detected' };
  if (migrationEnded(ms)) return { type: 'nothing', why: 'migration ended; waiting for the hand-over' };
  switch (launcher) {
    case LauncherState.Initializing:
      return { type: 'nothing', why: 'target launcher initialising', requeueAfterMs: LAUNCHER_INIT_POLL_MS };
    case LauncherState.Unreachable:
      return { type: 'nothing', why: 'target launcher not answering yet', requeueAfterMs: LAUNCHER_WAIT_MS };
    case LauncherState.Unresponsive:
      // The source sees its streams break and reports the failure; the controller removes the pod.
      return { type: 'close', why: 'the target launcher is gone' };
    case LauncherState.Ready:
      break;
  }
  // An incoming domain exists once the source's daemon started the transfer: never prepare
  // over it. A handler restarted now lost its listeners with the streams: the source fails.
  if (domainExists(domain)) return { type: 'nothing', why: 'incoming migration in progress' };
  // The open endpoint's address and ports are part of every status this handler computes.
  if (!input.endpointOpen) return { type: 'prepare' };
  return { type: 'nothing', why: 'target ready, waiting for the source' };
}
