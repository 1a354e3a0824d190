import { LauncherError } from '../errors.js';

export type DomainType = 'kvm' | 'qemu';

/**
 * `kvm` only when the probe proved that KVM really runs a guest (the device node existing
 * proves nothing: some hosts expose /dev/kvm backed by a paravirtual implementation that hangs
 * ordinary guests); else software emulation when allowed, else an error naming the switch.
 */
export function decideDomainType(kvmUsable: boolean, allowEmulation: boolean): DomainType {
  if (kvmUsable) return 'kvm';
  if (allowEmulation) return 'qemu';
  throw new LauncherError(
    'LAUNCHER_ERR_NO_HYPERVISOR',
    'KVM is not usable on this node and emulation is not allowed (--allow-emulation=false)',
  );
}
