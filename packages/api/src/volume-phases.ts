// The phases of a VMI's volume in status.volumeStatus, as KubeVirt spells them. A volume the VMI
// boots with is Pending, Bound or Ready; a hotplugged one walks the whole way:
// Pending (no claim yet) → Bound (claim bound) → AttachedToNode (its attachment pod runs on the
// VMI's node; controller) → MountedToPod (in the launcher pod's hotplug directory; handler) →
// Ready (a disk of the running domain; handler, from the launcher) and, on removal, Detaching.

export const VolumePhase = {
  Pending: 'Pending',
  Bound: 'Bound',
  AttachedToNode: 'AttachedToNode',
  MountedToPod: 'MountedToPod',
  Ready: 'Ready',
  Detaching: 'Detaching',
} as const;

export type VolumePhase = (typeof VolumePhase)[keyof typeof VolumePhase];

export const VOLUME_PHASES: readonly VolumePhase[] = Object.values(VolumePhase);
