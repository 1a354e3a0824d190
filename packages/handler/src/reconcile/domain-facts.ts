// Small readings of a launcher-reported domain shared by decide() and computeStatus().

import { DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS, type VirtualMachineInstance } from '@podvirt/api';
import type { cmd } from '@podvirt/proto';
import { LauncherState } from '../launcher/launcher-state.js';

const DOWN_STATES = new Set(['Shutoff', 'Crashed', 'NoState', '']);

/** Defined and not undefined by the launcher. */
export function domainExists(domain: cmd.Domain | undefined): domain is cmd.Domain {
  return domain !== undefined && !domain.deleted;
}

/** qemu runs (in any state but off). */
export function domainAlive(domain: cmd.Domain | undefined): domain is cmd.Domain {
  return domainExists(domain) && !DOWN_STATES.has(domain.state);
}

/**
 * The grace period KubeVirt uses: the VMI's own, else what the launcher marked on the domain
 * (it knew the VMI), else the API default.
 */
export function gracePeriodSeconds(vmi: VirtualMachineInstance | undefined, domain: cmd.Domain | undefined): number {
  // The VMI comes from the API as it is: a value decode would refuse must not become a NaN
  // deadline (and a NaN requeue, which is a 1 ms retry loop).
  const fromVmi: unknown = vmi?.spec.terminationGracePeriodSeconds;
  if (isSeconds(fromVmi)) return fromVmi;
  const mark = domain?.gracefulShutdown;
  if (mark !== undefined && isSeconds(mark.gracePeriodSeconds)) return mark.gracePeriodSeconds;
  return DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS;
}

function isSeconds(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0;
}

/**
 * Whether a destroyed domain means the guest failed to shut down in time: a graceful (ACPI)
 * shutdown was possible, so being destroyed is the grace period running out.
 */
export function acpiShutdownInPlay(vmi: VirtualMachineInstance | undefined, domain: cmd.Domain | undefined): boolean {
  const acpiDisabled = vmi?.spec.domain.features?.acpi?.enabled === false;
  return !acpiDisabled && gracePeriodSeconds(vmi, domain) > 0;
}

/**
 * What is still true of the cached domain: once the launcher is declared gone, a domain last
 * seen up is gone with it (KubeVirt marks it deleted); one last seen stopped keeps its state,
 * which tells how the guest ended.
 */
export function effectiveDomain(domain: cmd.Domain | undefined, launcher: LauncherState): cmd.Domain | undefined {
  if (domain === undefined || launcher !== LauncherState.Unresponsive || !domainAlive(domain)) return domain;
  return { ...domain, deleted: true };
}
