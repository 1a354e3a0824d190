// The Linux capabilities the compute container must grant, checked when the launcher starts.
// Without one, libvirt fails much later and far from the cause ("cannot apply process
// capabilities -5" when it starts qemu, once the handler's first Sync arrives); checked here,
// the launcher's log names the capability and what needs it, and the VMI fails at once.
//
// Why each one is needed was measured by starting the launcher without it
// (test/bench/compute-capabilities.ts); docs/install.md, "The compute container's capabilities", has the table.

import { readFile } from 'node:fs/promises';
import { LauncherError } from '../errors.js';

export interface RequiredCapability {
  /** As the kernel names it: `CAP_SETPCAP`. */
  readonly name: string;
  /** Its number (include/uapi/linux/capability.h). */
  readonly bit: number;
  /** What fails without it. */
  readonly why: string;
}

export const REQUIRED_CAPABILITIES: readonly RequiredCapability[] = [
  { name: 'CAP_CHOWN', bit: 0, why: 'the launcher gives the guest\'s serial log to the account the guest-console-log container runs as (uid 107)' },
  { name: 'CAP_DAC_OVERRIDE', bit: 1, why: 'the libvirt daemon probes qemu with it (so that the probe can open root-only devices) and opens the serial log, which belongs to the guest-console-log container\'s account' },
  { name: 'CAP_SETGID', bit: 6, why: 'the libvirt daemon sets qemu\'s groups before it starts qemu' },
  { name: 'CAP_SETUID', bit: 7, why: 'the libvirt daemon sets qemu\'s user before it starts qemu' },
  { name: 'CAP_SETPCAP', bit: 8, why: 'the libvirt daemon drops capabilities before it starts qemu' },
  { name: 'CAP_NET_BIND_SERVICE', bit: 10, why: 'the launcher\'s DHCP server for a pod network interface listens on port 67' },
];

export class CapabilityError extends LauncherError {
  override readonly name = 'CapabilityError';
  readonly missing: readonly RequiredCapability[];

  constructor(missing: readonly RequiredCapability[]) {
    super('LAUNCHER_ERR_CAPABILITIES', `${missing.map((c) => `${c.name} missing: ${c.why}`).join('; ')} (add ${missing.map((c) => c.name.replace(/^CAP_/, '')).join(', ')} to the compute container's securityContext.capabilities)`);
    this.missing = missing;
  }
}

function capabilitySet(status: string, field: 'CapEff' | 'CapBnd'): bigint {
  const hex = new RegExp(`^${field}:\\s*([0-9a-f]+)$`, 'm').exec(status)?.[1];
  if (hex === undefined) throw new LauncherError('LAUNCHER_ERR_CAPABILITIES', `no ${field} line in the process status`);
  return BigInt(`0x${hex}`);
}

/**
 * Pure: the required capabilities this process lacks, from its /proc/<pid>/status. A
 * capability counts only when it is both effective (the launcher uses it) and in the bounding
 * set (the libvirt daemon, which the launcher execs as root, gets the bounding set).
 */
export function missingCapabilities(status: string, required: readonly RequiredCapability[] = REQUIRED_CAPABILITIES): RequiredCapability[] {
  const usable = capabilitySet(status, 'CapEff') & capabilitySet(status, 'CapBnd');
  return required.filter((c) => (usable & (1n << BigInt(c.bit))) === 0n);
}

/** Throws CapabilityError naming every required capability this process lacks. */
export async function checkCapabilities(statusPath = '/proc/self/status'): Promise<void> {
  const missing = missingCapabilities(await readFile(statusPath, 'utf8'));
  if (missing.length > 0) throw new CapabilityError(missing);
}
