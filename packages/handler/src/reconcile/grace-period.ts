// The graceful-shutdown facts decide() and the phase read: the VMI's grace period (decoded, or
// the launcher's mark) and whether an ACPI shutdown was in play.

import { DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS, type DefaultedVmi } from '@podvirt/api';
import type { cmd } from '@podvirt/proto';

/**
 * The grace period KubeVirt uses: the VMI's own (decoded: defaulted and checked), else the one
 * the launcher marked on the domain (the VMI's own too: it learnt it from the VMI's Sync), for a
 * VMI gone or no longer decoding; the API default only for a domain with no mark.
 */
export function gracePeriodSeconds(vmi: DefaultedVmi | undefined, domain: cmd.Domain): number {
  if (vmi !== undefined) return vmi.spec.terminationGracePeriodSeconds;
  // The mark comes over the wire from another process: a value that is no duration must not
  // become a NaN deadline (and a NaN requeue, which is a 1 ms retry loop).
  const marked = domain.gracefulShutdown?.gracePeriodSeconds;
  return marked !== undefined && Number.isFinite(marked) && marked >= 0 ? marked : DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS;
}

/**
 * Whether a destroyed domain means the guest failed to shut down in time: a graceful (ACPI)
 * shutdown was possible, so being destroyed is the grace period running out.
 */
export function acpiShutdownInPlay(vmi: DefaultedVmi | undefined, domain: cmd.Domain): boolean {
  const acpiDisabled = vmi?.spec.domain.features.acpi.enabled === false;
  return !acpiDisabled && gracePeriodSeconds(vmi, domain) > 0;
}
