// decide, for storage: may a launcher pod be created for this VMI's PVC volumes yet? Each claim
// must exist in the VMI's namespace and be Bound; a ReadWriteOnce claim must not be in use by
// another VMI's running launcher unless the disk is shareable. What is learned of each claim is
// recorded in status.volumeStatus (KubeVirt's persistentVolumeClaimInfo), from which the
// launcher sizes a new disk.img. Pure: the stores are passed in.

import type { V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import type { VirtualMachineInstance, VolumeStatus } from '@podvirt/api';

/** KubeVirt's reasons: the claim does not exist; it is not bound yet. podvirt's: it is in use. */
export const ClaimReason = {
  FailedPvcNotFound: 'FailedPvcNotFound',
  PVCNotReady: 'PVCNotReady',
  PvcInUse: 'PvcInUse',
} as const;

export type ClaimReason = (typeof ClaimReason)[keyof typeof ClaimReason];

/** What the controller reads about claims: from informers in production. */
export interface ClaimStore {
  getClaim(namespace: string, name: string): V1PersistentVolumeClaim | undefined;
  /** Launcher pods in the namespace that mount the claim. */
  podsUsingClaim(namespace: string, claimName: string): V1Pod[];
}

export interface ClaimCheck {
  /** Why no pod may be created yet; the first blocked claim. */
  readonly blocked?: { readonly reason: ClaimReason; readonly message: string };
  /** Volume name → its bound claim (the pod renders block claims as volumeDevices). */
  readonly claims: ReadonlyMap<string, V1PersistentVolumeClaim>;
  readonly volumeStatus: VolumeStatus[];
}

/** The filesystem's share of a volume, as CDI's default global overhead (5.5 %). */
export const FILESYSTEM_OVERHEAD = '0.055';

function podIsLive(pod: V1Pod): boolean {
  return pod.metadata?.deletionTimestamp == null && pod.status?.phase !== 'Succeeded' && pod.status?.phase !== 'Failed';
}

function sharesWithOthers(accessModes: readonly string[]): boolean {
  return accessModes.includes('ReadWriteMany') || accessModes.includes('ReadOnlyMany');
}

/** A volume's status entry with what is known of its bound claim (the disk image is sized from it). */
export function volumeStatusOf(volume: string, claim: V1PersistentVolumeClaim): VolumeStatus {
  const mode = claim.spec?.volumeMode === 'Block' ? 'Block' : 'Filesystem';
  return {
    name: volume,
    target: '',
    persistentVolumeClaimInfo: {
      claimName: claim.metadata?.name ?? '',
      accessModes: claim.status?.accessModes ?? claim.spec?.accessModes ?? [],
      volumeMode: mode,
      ...(claim.status?.capacity ? { capacity: { ...claim.status.capacity } } : {}),
      ...(claim.spec?.resources?.requests ? { requests: { ...claim.spec.resources.requests } } : {}),
      ...(mode === 'Filesystem' ? { filesystemOverhead: FILESYSTEM_OVERHEAD } : {}),
    },
  };
}

/** The owning VMI's name of a launcher pod. */
function ownerName(pod: V1Pod): string | undefined {
  return pod.metadata?.ownerReferences?.find((r) => r.controller === true)?.name;
}

export function checkClaims(vmi: VirtualMachineInstance, store: ClaimStore): ClaimCheck {
  const namespace = vmi.metadata.namespace ?? '';
  const claims = new Map<string, V1PersistentVolumeClaim>();
  const volumeStatus: VolumeStatus[] = [];
  let blocked: ClaimCheck['blocked'];
  const block = (reason: ClaimReason, message: string): void => {
    blocked ??= { reason, message };
  };
  for (const volume of vmi.spec.volumes ?? []) {
    const claimName = volume.persistentVolumeClaim?.claimName;
    // A hotplugged claim does not hold the launcher pod back: its attachment pod waits for it.
    if (claimName === undefined || volume.persistentVolumeClaim?.hotpluggable === true) continue;
    const claim = store.getClaim(namespace, claimName);
    if (claim === undefined) {
      block(ClaimReason.FailedPvcNotFound, `PVC ${namespace}/${claimName} does not exist, waiting for it to appear`);
      continue;
    }
    const phase = claim.status?.phase ?? 'Pending';
    if (phase !== 'Bound') {
      block(ClaimReason.PVCNotReady, `PVC ${namespace}/${claimName} is in phase ${phase}, waiting for it to be bound`);
      continue;
    }
    claims.set(volume.name, claim);
    volumeStatus.push(volumeStatusOf(volume.name, claim));
    const shareable = vmi.spec.domain.devices.disks?.find((d) => d.name === volume.name)?.shareable === true;
    if (shareable || sharesWithOthers(claim.status?.accessModes ?? claim.spec?.accessModes ?? [])) continue;
    const other = store.podsUsingClaim(namespace, claimName).find((pod) => podIsLive(pod) && ownerName(pod) !== vmi.metadata.name);
    if (other !== undefined) {
      block(ClaimReason.PvcInUse, `PVC ${namespace}/${claimName} is ReadWriteOnce and in use by VMI ${namespace}/${ownerName(other) ?? '?'}; waiting for it to be released (or mark the disk shareable)`);
    }
  }
  return { ...(blocked === undefined ? {} : { blocked }), claims, volumeStatus };
}

/** The names of the claims a VMI uses, to find the VMIs a claim's change concerns. */
export function claimNames(vmi: VirtualMachineInstance): string[] {
  return (vmi.spec.volumes ?? []).flatMap((v) => (v.persistentVolumeClaim?.claimName === undefined ? [] : [v.persistentVolumeClaim.claimName]));
}
