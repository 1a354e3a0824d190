// What a launcher-reported domain says of qemu, read the same way by the reconcile and both
// sides of a live migration.

import type { cmd } from '@podvirt/proto';
import { LauncherState } from './launcher-state.js';

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
 * What is still true of the cached domain: once the launcher is declared gone, a domain last
 * seen up is gone with it (KubeVirt marks it deleted); one last seen stopped keeps its state,
 * which tells how the guest ended.
 */
export function effectiveDomain(domain: cmd.Domain | undefined, launcher: LauncherState): cmd.Domain | undefined {
  if (domain === undefined || launcher !== LauncherState.Unresponsive || !domainAlive(domain)) return domain;
  return { ...domain, deleted: true };
}
