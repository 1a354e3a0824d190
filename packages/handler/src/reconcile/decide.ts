// The pure half of the reconcile loop (the decision table of `sync` in KubeVirt's
// pkg/virt-handler/vm.go):
// given the VMI (undefined when gone from the cluster) and its decoded spec (undefined when it
// does not decode), the launcher's last domain, the launcher's state and the time, choose one
// Action. No I/O here.

import { hotplugVolumeNames, isFinalPhase, VmiPhase, VolumePhase, type DefaultedVmi, type VirtualMachineInstance } from '@podvirt/api';
import type { cmd } from '@podvirt/proto';
import { LauncherState } from '../launcher/launcher-state.js';
import type { Action } from './action.js';
import { computePhase } from './compute-phase.js';
import { domainAlive, domainExists, effectiveDomain } from '../launcher/domain-liveness.js';
import { LAUNCHER_INIT_POLL_MS, LAUNCHER_WAIT_MS } from '../launcher/launcher-waits.js';
import { gracePeriodSeconds } from './grace-period.js';

// KubeVirt re-sends the ACPI request every 5 s because a booting guest may miss it.
export const SHUTDOWN_RESEND_MS = 5_000;
// A domain Shutoff with no reason right after Scheduled may be qemu still starting.
export const SLOW_START_WINDOW_MS = 5 * 60_000;
export const SLOW_START_RECHECK_MS = 5_000;

export function decide(
  vmi: VirtualMachineInstance | undefined,
  defaulted: DefaultedVmi | undefined,
  cachedDomain: cmd.Domain | undefined,
  launcher: LauncherState,
  nowMs: number,
  /** The launcher pod still has a hotplugged volume mounted that left the spec (its disk may be in the domain). */
  hotplugDetachDue = false,
): Action {
  const domain = effectiveDomain(cachedDomain, launcher);
  // Domain unknown: never act on a guess.
  if (launcher === LauncherState.Unreachable) return { type: 'nothing', why: 'launcher not answering yet', requeueAfterMs: LAUNCHER_WAIT_MS };
  const exists = domainExists(domain);
  const alive = domainAlive(domain);
  const canAsk = launcher === LauncherState.Ready;
  const final = vmi !== undefined && isFinalPhase(vmi.status?.phase);
  const stop = () => (alive && canAsk ? shutdown(defaulted, domain, nowMs) : remove(exists && canAsk, vmi === undefined || final));

  // Rows 1-3: the launcher was told to stop, the VMI is gone, or it is being deleted.
  if (vmi === undefined || vmi.metadata.deletionTimestamp !== undefined) return stop();
  if (domain?.gracefulShutdown?.started === true && vmi.status?.phase === VmiPhase.Running) return stop();
  // Row 4: final VMIs only get their domain and local state removed.
  if (final) return remove(exists && canAsk, true);
  // Row 5: the domain stopped by itself.
  if (exists && !alive) {
    if (slowStart(vmi, domain, nowMs)) return { type: 'nothing', why: 'qemu may still be starting', requeueAfterMs: SLOW_START_RECHECK_MS };
    return remove(canAsk, false);
  }
  // Row 6: keep the domain in sync, but first let the status catch up with the domain.
  if (launcher === LauncherState.Initializing) return { type: 'nothing', why: 'launcher initialising', requeueAfterMs: LAUNCHER_INIT_POLL_MS };
  if (launcher === LauncherState.Unresponsive) return { type: 'updateStatus' };
  if (computePhase(vmi, defaulted, domain, launcher) !== (vmi.status?.phase ?? VmiPhase.Unset)) return { type: 'updateStatus' };
  if (!syncActs(domain) && !hotplugPending(vmi) && !hotplugDetachDue) return { type: 'updateStatus' };
  return { type: 'sync' };
}

/**
 * Whether the launcher's Sync has hotplug work: a volume mounted into the pod and not attached
 * yet (MountedToPod), or one that left the spec while the domain may hold its disk.
 */
export function hotplugPending(vmi: VirtualMachineInstance): boolean {
  const hotplugged = hotplugVolumeNames(vmi.spec);
  const inSpec = new Set((vmi.spec.volumes ?? []).map((v) => v.name));
  return (vmi.status?.volumeStatus ?? []).some((s) =>
    (hotplugged.has(s.name) && s.phase === VolumePhase.MountedToPod)
    || (!inSpec.has(s.name) && (s.phase === VolumePhase.Ready || s.phase === VolumePhase.Detaching)));
}

/**
 * Whether the launcher's Sync would change the domain: define and start one that is missing,
 * resume one paused by anything but the user. A spec change is never applied to a defined
 * domain, so for a domain running, or paused by the user, Sync is a no-op round trip under the
 * launcher's lock, which the next pause or unpause would wait for: only the status follows.
 */
function syncActs(domain: cmd.Domain | undefined): boolean {
  if (!domainExists(domain)) return true;
  return domain.state === 'Paused' && domain.reason !== 'User' && !domain.pausedByUser;
}

function remove(undefine: boolean, cleanup: boolean): Action {
  return { type: 'delete', undefine, cleanup };
}

function shutdown(defaulted: DefaultedVmi | undefined, domain: cmd.Domain, nowMs: number): Action {
  const grace = gracePeriodSeconds(defaulted, domain);
  if (grace <= 0) return { type: 'kill', reason: 'no-grace', requeueAfterMs: LAUNCHER_WAIT_MS };
  const mark = domain.gracefulShutdown;
  const started = mark?.started === true;
  // The grace clock starts when the launcher first took the shutdown, as in KubeVirt.
  const startedAt = started && Number.isFinite(mark.startedAtMs) ? mark.startedAtMs : nowMs;
  const deadline = startedAt + grace * 1000;
  if (nowMs >= deadline) return { type: 'kill', reason: 'grace-expired', requeueAfterMs: LAUNCHER_WAIT_MS };
  return {
    type: 'shutdown',
    send: domain.state !== 'ShuttingDown',
    first: !started,
    requeueAfterMs: Math.max(1, Math.min(SHUTDOWN_RESEND_MS, deadline - nowMs)),
  };
}

function slowStart(vmi: VirtualMachineInstance, domain: cmd.Domain, nowMs: number): boolean {
  if (domain.state !== 'Shutoff' || (domain.reason !== '' && domain.reason !== 'Unknown')) return false;
  if (vmi.status?.phase !== VmiPhase.Scheduled) return false;
  const scheduled = vmi.status.phaseTransitionTimestamps?.findLast((t) => t.phase === VmiPhase.Scheduled);
  if (scheduled === undefined) return false;
  return nowMs - Date.parse(scheduled.phaseTransitionTimestamp) < SLOW_START_WINDOW_MS;
}
