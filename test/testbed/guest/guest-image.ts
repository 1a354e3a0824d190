import { existsSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './repo-root.js';

/**
 * The built test guest (see `test/testbed/guest/build`): a Debian cloud kernel, a busybox
 * initramfs with acpid and qemu-ga, and a small ext4 data disk. Markers are what the guest
 * prints on its serial console (ttyS0).
 */
export interface GuestImage {
  /** The content-addressed build directory (`.cache/guest/<hash>`). */
  readonly dir: string;
  readonly kernel: string;
  readonly initrd: string;
  /** The pristine data disk; give every VM its own copy, the guest writes to it. */
  readonly dataDisk: string;
  /** Printed on every boot: `PODVIRT-GUEST-READY uptime=<s> agent|noagent acpi=<mode> boot_id=<uuid>`. */
  readonly readyMarker: 'PODVIRT-GUEST-READY';
  /** `PODVIRT-GUEST-HEARTBEAT <n>`, every 5 s (or `podvirt.heartbeat=<s>`). */
  readonly heartbeatMarker: 'PODVIRT-GUEST-HEARTBEAT';
  /** Printed when the ACPI power button powers the guest off. */
  readonly acpiPowerButtonMarker: 'PODVIRT-GUEST-ACPI-POWERBUTTON';
  /** Printed when the power button is pressed on a guest booted with `acpiIgnoreArg`. */
  readonly acpiIgnoredMarker: 'PODVIRT-GUEST-ACPI-IGNORED';
  /** Printed when qemu-ga's guest-shutdown runs the `/sbin/shutdown` shim. */
  readonly agentShutdownMarker: 'PODVIRT-GUEST-AGENT-SHUTDOWN';
  /** The fast kernel command line (measured on a 2-core machine under TCG: boot to ready in ~2.3 s). */
  readonly kernelArgs: string;
  /** Add to the command line for a guest that ignores the power button. */
  readonly acpiIgnoreArg: 'podvirt.acpi=ignore';
  /** Add to the command line for a guest without a running agent. */
  readonly noAgentArg: 'podvirt.agent=off';
}

/** The guest has not been built; the message says how to build it. */
export class GuestImageMissingError extends Error {
  override readonly name = 'GuestImageMissingError';
  readonly code = 'PODVIRT_TESTBED_NO_GUEST_IMAGE';
}

// `quiet` and the rest skip work a throwaway TCG guest does not need (timer checks, crypto
// self-tests, mitigations, legacy keyboard probing): 2.6 s → 2.3 s to ready.
const KERNEL_ARGS = [
  'console=ttyS0',
  'quiet',
  'panic=-1',
  'tsc=reliable',
  'no_timer_check',
  'cryptomgr.notests',
  'mitigations=off',
  'i8042.noaux',
  'i8042.nokbd',
  'i8042.nopnp',
  'random.trust_cpu=on',
  'audit=0',
  'apparmor=0',
  'security=none',
].join(' ');

/** The current guest build under `<repo>/.cache/guest/current`. */
export function guestImage(root: string = repoRoot()): GuestImage {
  const current = join(root, '.cache', 'guest', 'current');
  const files = ['vmlinuz', 'initrd.img', 'data.ext4', 'manifest'];
  const missing = files.filter((f) => !existsSync(join(current, f)));
  if (missing.length > 0) {
    throw new GuestImageMissingError(
      `the test guest image is not built (missing ${missing.join(', ')} in ${current}); ` +
        'run test/testbed/guest/build',
    );
  }
  // Resolve the symlink so a rebuild during a test run does not swap files under a VM.
  const dir = realpathSync(current);
  return {
    dir,
    kernel: join(dir, 'vmlinuz'),
    initrd: join(dir, 'initrd.img'),
    dataDisk: join(dir, 'data.ext4'),
    readyMarker: 'PODVIRT-GUEST-READY',
    heartbeatMarker: 'PODVIRT-GUEST-HEARTBEAT',
    acpiPowerButtonMarker: 'PODVIRT-GUEST-ACPI-POWERBUTTON',
    acpiIgnoredMarker: 'PODVIRT-GUEST-ACPI-IGNORED',
    agentShutdownMarker: 'PODVIRT-GUEST-AGENT-SHUTDOWN',
    kernelArgs: KERNEL_ARGS,
    acpiIgnoreArg: 'podvirt.acpi=ignore',
    noAgentArg: 'podvirt.agent=off',
  };
}
