// The VMI phase from the domain, with KubeVirt's mapping (calculateVmPhaseForStatusReason):
// the handler owns Running, Succeeded and Failed, never leaves a final phase, and keeps the
// current phase whenever the domain does not say otherwise.

import { isFinalPhase, VmiPhase, type DefaultedVmi, type VirtualMachineInstance } from '@podvirt/api';
import type { cmd } from '@podvirt/proto';
import { LauncherState } from '../launcher/launcher-state.js';
import { acpiShutdownInPlay } from './grace-period.js';

const RUNNING_STATES = new Set(['Running', 'Blocked', 'PMSuspended']);
const STOPPED_STATES = new Set(['Shutoff', 'Crashed']);

/** `defaulted`: the VMI's spec as decoded (defaulted-vmis.ts), undefined when it does not decode. */
export function computePhase(vmi: VirtualMachineInstance, defaulted: DefaultedVmi | undefined, domain: cmd.Domain | undefined, launcher: LauncherState): VmiPhase {
  const current = vmi.status?.phase ?? VmiPhase.Unset;
  if (isFinalPhase(current)) return current;
  // A deleted domain still counts when its last state says how it stopped.
  const known = domain !== undefined && (!domain.deleted || STOPPED_STATES.has(domain.state)) ? domain : undefined;
  if (known === undefined) return phaseWithoutDomain(current, launcher, vmi.metadata.deletionTimestamp != null);
  if (RUNNING_STATES.has(known.state)) return VmiPhase.Running;
  if (known.state === 'Paused') return known.reason === 'PostcopyFailed' ? VmiPhase.Failed : VmiPhase.Running;
  if (STOPPED_STATES.has(known.state)) return phaseOfStoppedDomain(defaulted, known, current);
  // ShuttingDown, NoState: nothing decided yet.
  return current;
}

function phaseWithoutDomain(current: VmiPhase, launcher: LauncherState, deleting: boolean): VmiPhase {
  if (current === VmiPhase.Scheduled || current === VmiPhase.Running) {
    // The VM can never come (back) when its launcher is gone.
    if (launcher === LauncherState.Unresponsive) return VmiPhase.Failed;
    // Deletion wins: with no domain there is nothing to shut down, so the VMI ends now rather
    // than wait for a Sync that keeps failing or a launcher that never defines one. Only a
    // launcher that cannot be asked yet (domain unknown) is waited for.
    if (deleting && launcher !== LauncherState.Unreachable) return VmiPhase.Failed;
    return current;
  }
  return VmiPhase.Scheduled;
}

function phaseOfStoppedDomain(defaulted: DefaultedVmi | undefined, domain: cmd.Domain, current: VmiPhase): VmiPhase {
  switch (domain.reason) {
    // Failed is libvirt's SHUTOFF_FAILED: qemu died under it (a SIGKILLed qemu reports this or Crashed).
    case 'Crashed':
    case 'Panicked':
    case 'Failed':
      return VmiPhase.Failed;
    case 'Destroyed':
      // Destroyed after an ACPI shutdown was possible means the grace period ran out.
      return acpiShutdownInPlay(defaulted, domain) ? VmiPhase.Failed : VmiPhase.Succeeded;
    case 'Shutdown':
    case 'Saved':
    case 'FromSnapshot':
      return VmiPhase.Succeeded;
    default:
      // The launcher gave the domain up for good without saying how it ended: nothing will
      // bring it back, so the VMI must not stay Running (KubeVirt fails it once the domain is gone).
      return domain.deleted ? VmiPhase.Failed : current;
  }
}
