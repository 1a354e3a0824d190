// decide, for hotplugged volumes of a running VMI: which attachment pods to create and delete,
// and the controller's share of each volume's status.volumeStatus entry:
//   Pending (claim missing, not bound, or a ReadWriteOnce claim another VMI holds)
//   → Bound (claim bound; its attachment pod is created) → AttachedToNode (the pod runs).
// MountedToPod and Ready are the handler's; the controller never moves a volume back from them.
// A volume gone from the spec keeps its pod while the handler still has it mounted
// (MountedToPod, Ready); once it does not, the pod is deleted and the entry goes with it.
// A volume that comes to wait for its claim (missing: a Normal Event, as KubeVirt records it;
// a ReadWriteOnce claim in use elsewhere: a Warning, rechecked every CLAIM_IN_USE_RECHECK_MS)
// gets one Event per reason and message its entry takes.
// Pure: the claim store is passed in.

import type { V1Pod } from '@kubernetes/client-node';
import { EventType, HOTPLUG_VOLUME_LABEL, isFinalPhase, isHotplugVolume, VmiPhase, VolumePhase, type VirtualMachineInstance, type VolumeStatus } from '@podvirt/api';
import { ClaimReason, volumeStatusOf, type ClaimStore } from './claim-check.js';
import { CLAIM_IN_USE_RECHECK_MS } from './decide-vmi.js';
import type { DecisionEvent } from './vmi-decision.js';

/** KubeVirt's reasons on a hotplugged volume's status entry. */
export const HotplugReason = {
  ...ClaimReason,
  PVCBound: 'PVCBound',
  AttachedToNode: 'SuccessfulCreate',
} as const;

export interface HotplugPlan {
  /** Volumes whose attachment pod is to be created, with their claim's name. */
  readonly create: readonly { readonly volume: string; readonly claimName: string }[];
  /** Attachment pods to delete. */
  readonly delete: readonly string[];
  /** The VMI's whole volumeStatus after this pass. */
  readonly volumeStatus: VolumeStatus[];
  /** For each volume that came to wait for its claim, or waits for another reason now. */
  readonly events: readonly DecisionEvent[];
  /** Set while a volume waits for a claim another VMI holds (its release sends no VMI event). */
  readonly requeueAfterMs?: number;
}

const WAITING_EVENT: Readonly<Record<string, EventType>> = { [ClaimReason.FailedPvcNotFound]: EventType.Normal, [ClaimReason.PvcInUse]: EventType.Warning };

const HANDLER_PHASES: ReadonlySet<string> = new Set([VolumePhase.MountedToPod, VolumePhase.Ready]);

function podLive(pod: V1Pod): boolean {
  return pod.metadata?.deletionTimestamp == null && pod.status?.phase !== 'Failed' && pod.status?.phase !== 'Succeeded';
}

function volumeOf(pod: V1Pod): string | undefined {
  return pod.metadata?.labels?.[HOTPLUG_VOLUME_LABEL];
}

function heldElsewhere(vmi: VirtualMachineInstance, claimName: string, store: ClaimStore): string | undefined {
  const claim = store.getClaim(vmi.metadata.namespace ?? '', claimName);
  const modes = claim?.status?.accessModes ?? claim?.spec?.accessModes ?? [];
  if (modes.includes('ReadWriteMany') || modes.includes('ReadOnlyMany')) return undefined;
  const other = store.podsUsingClaim(vmi.metadata.namespace ?? '', claimName).find((p) => podLive(p) && !p.metadata?.ownerReferences?.some((r) => r.uid === vmi.metadata.uid));
  return other === undefined ? undefined : (other.metadata?.ownerReferences?.[0]?.name ?? other.metadata?.name ?? '?');
}

function attachRef(pod: V1Pod): { attachPodName: string; attachPodUID: string } {
  return { attachPodName: pod.metadata?.name ?? '', attachPodUID: pod.metadata?.uid ?? '' };
}

function entry(name: string, phase: VolumePhase, reason: string, message: string, pod?: V1Pod): VolumeStatus {
  return { name, target: '', phase, reason, message, ...(pod === undefined ? {} : { hotplugVolume: attachRef(pod) }) };
}

export function planHotplug(vmi: VirtualMachineInstance, pods: readonly V1Pod[], store: ClaimStore): HotplugPlan {
  const namespace = vmi.metadata.namespace ?? '';
  const previous = new Map((vmi.status?.volumeStatus ?? []).map((s) => [s.name, s]));
  const wanted = vmi.metadata.deletionTimestamp == null && !isFinalPhase(vmi.status?.phase) ? (vmi.spec.volumes ?? []).filter(isHotplugVolume) : [];
  const running = vmi.status?.phase === VmiPhase.Running && vmi.status.nodeName !== undefined;
  const create: { volume: string; claimName: string }[] = [];
  const remove: string[] = [];
  const hotplugStatus = new Map<string, VolumeStatus>();
  const events: DecisionEvent[] = [];
  for (const volume of wanted) {
    const claimName = volume.persistentVolumeClaim?.claimName ?? '';
    const pod = pods.find((p) => volumeOf(p) === volume.name && podLive(p));
    const prev = previous.get(volume.name);
    const claim = store.getClaim(namespace, claimName);
    let status: VolumeStatus;
    if (claim === undefined) status = entry(volume.name, VolumePhase.Pending, HotplugReason.FailedPvcNotFound, `PVC ${namespace}/${claimName} does not exist`);
    else if (claim.status?.phase !== 'Bound') status = entry(volume.name, VolumePhase.Pending, HotplugReason.PVCNotReady, `PVC ${namespace}/${claimName} is in phase ${claim.status?.phase ?? 'Pending'}, waiting for it to be bound`);
    else if (pod === undefined && heldElsewhere(vmi, claimName, store) !== undefined) {
      status = entry(volume.name, VolumePhase.Pending, HotplugReason.PvcInUse, `PVC ${namespace}/${claimName} is ReadWriteOnce and in use by ${heldElsewhere(vmi, claimName, store) ?? '?'}`);
    } else if (pod === undefined) {
      if (running) create.push({ volume: volume.name, claimName });
      status = entry(volume.name, VolumePhase.Bound, HotplugReason.PVCBound, `PVC ${namespace}/${claimName} is bound${running ? '; creating its attachment pod' : '; waiting for the VMI to run'}`);
    } else if (prev?.phase !== undefined && HANDLER_PHASES.has(prev.phase)) status = { ...prev, hotplugVolume: attachRef(pod) };
    else if (pod.status?.phase === 'Running') status = entry(volume.name, VolumePhase.AttachedToNode, HotplugReason.AttachedToNode, `Created hotplug attachment pod ${pod.metadata?.name ?? ''}, with volume ${volume.name}`, pod);
    else status = entry(volume.name, VolumePhase.Bound, HotplugReason.PVCBound, `attachment pod ${pod.metadata?.name ?? ''} is ${pod.status?.phase ?? 'Pending'}`, pod);
    // What the claim is, for the handler that sizes a new disk image from it.
    const info = claim === undefined ? undefined : volumeStatusOf(volume.name, claim).persistentVolumeClaimInfo;
    hotplugStatus.set(volume.name, info === undefined ? status : { ...status, persistentVolumeClaimInfo: info });
    const type = WAITING_EVENT[status.reason ?? ''];
    if (type !== undefined && (prev?.reason !== status.reason || prev?.message !== status.message)) events.push({ type, reason: status.reason ?? '', message: `volume ${volume.name}: ${status.message ?? ''}` });
  }
  const wantedNames = new Set(wanted.map((v) => v.name));
  for (const pod of pods) {
    const volume = volumeOf(pod) ?? '';
    const name = pod.metadata?.name ?? '';
    if (pod.metadata?.deletionTimestamp != null) continue;
    const stillWanted = wantedNames.has(volume) && podLive(pod);
    const mounted = HANDLER_PHASES.has(previous.get(volume)?.phase ?? '');
    if (stillWanted) continue;
    // The handler unmounts first (the VMI still runs); a failed pod or a finished VMI goes at once.
    if (mounted && !wantedNames.has(volume) && !isFinalPhase(vmi.status?.phase) && vmi.metadata.deletionTimestamp == null) {
      hotplugStatus.set(volume, { ...(previous.get(volume) as VolumeStatus), phase: VolumePhase.Detaching });
      continue;
    }
    remove.push(name);
  }
  // A boot volume's entry stays as it is; an entry of a volume the spec no longer has goes
  // (a detaching one is in hotplugStatus). Entries keep their places.
  const bootNames = new Set((vmi.spec.volumes ?? []).filter((v) => !isHotplugVolume(v)).map((v) => v.name));
  const volumeStatus: VolumeStatus[] = [];
  for (const s of vmi.status?.volumeStatus ?? []) {
    const next = hotplugStatus.get(s.name);
    if (next !== undefined) volumeStatus.push(next);
    else if (bootNames.has(s.name)) volumeStatus.push(s);
  }
  for (const [name, s] of hotplugStatus) if (!volumeStatus.some((v) => v.name === name)) volumeStatus.push(s);
  const inUse = [...hotplugStatus.values()].some((st) => st.reason === ClaimReason.PvcInUse);
  return { create, delete: remove, volumeStatus, events, ...(inUse ? { requeueAfterMs: CLAIM_IN_USE_RECHECK_MS } : {}) };
}
