// Whether a running VMI can move live to another node, and how: the LiveMigratable condition
// and status.migrationMethod as virt-handler computes them (pkg/virt-handler/vm.go,
// calculateLiveMigrationCondition). The handler owns both; the controller only reads the
// condition to accept or refuse a migration.
//
// - The pod network must be reached through masquerade: a bridge interface hands the pod's own
//   address to the guest, and the target pod has another one (unless the VMI carries KubeVirt's
//   annotation saying the user accepts that).
// - A PVC must be shared (ReadWriteMany), a hostDisk must say `shared: true`: the target opens
//   the same bytes, nothing is copied.
// - A hotplugged volume does not move yet: its attachment pod and mount are on this node only
//   (podvirt's refusal; KubeVirt moves it).
// - Any other writable disk lives in the pod (container disk overlay, emptyDisk, cloud-init
//   ISO): it moves with the memory, a block migration. A read-only cdrom needs no copy.

import {
  ConditionStatus, isHotplugVolume, VmiConditionReason, VmiConditionType,
  type ConditionUpdate, type DefaultedVmi, type MigrationMethod, type VirtualMachineInstance,
} from '@podvirt/api';

/** KubeVirt's opt-in for live-migrating a VMI whose pod-network interface is a bridge. */
export const ALLOW_POD_BRIDGE_MIGRATION_ANNOTATION = 'kubevirt.io/allow-pod-bridge-network-live-migration';

export interface LiveMigratability {
  readonly condition: ConditionUpdate;
  readonly method: MigrationMethod;
}

/** For the VMI as decoded (defaulted-vmis.ts): KubeVirt judges the stored VMI, which carries the API's defaults. */
export function liveMigratability(vmi: DefaultedVmi): LiveMigratability {
  const disks = checkVolumes(vmi);
  const method: MigrationMethod = disks.blockMigration ? 'BlockMigration' : 'LiveMigration';
  const hotplugged = (vmi.spec.volumes ?? []).find(isHotplugVolume);
  if (hotplugged !== undefined) {
    return { method, condition: notMigratable(VmiConditionReason.HotplugNotLiveMigratable, `volume ${hotplugged.name} is hot-plugged; podvirt cannot migrate a VMI with a hot-plugged volume (remove it with podvirtctl removevolume first)`) };
  }
  const network = interfaceProblem(vmi);
  if (network !== undefined) return { method, condition: notMigratable(VmiConditionReason.InterfaceNotLiveMigratable, network) };
  if (disks.problem !== undefined) return { method, condition: notMigratable(VmiConditionReason.DisksNotLiveMigratable, disks.problem) };
  return { method, condition: { type: VmiConditionType.LiveMigratable, status: ConditionStatus.True } };
}

function notMigratable(reason: string, message: string): ConditionUpdate {
  return { type: VmiConditionType.LiveMigratable, status: ConditionStatus.False, reason, message };
}

function interfaceProblem(vmi: VirtualMachineInstance): string | undefined {
  const interfaces = vmi.spec.domain.devices?.interfaces ?? [];
  if (interfaces.length === 0) return undefined;
  const podNetwork = (vmi.spec.networks ?? []).find((n) => n.pod !== undefined);
  if (podNetwork === undefined) return undefined;
  // Decoding guarantees an interface for every network.
  const primary = interfaces.find((i) => i.name === podNetwork.name);
  if (primary === undefined) return undefined;
  if (primary.masquerade !== undefined) return undefined;
  if (primary.bridge !== undefined && vmi.metadata.annotations?.[ALLOW_POD_BRIDGE_MIGRATION_ANNOTATION] !== undefined) return undefined;
  return `interface ${primary.name} connects to the pod network with a bridge (the guest holds the pod's own address); only masquerade can migrate`;
}

interface VolumeCheck {
  readonly blockMigration: boolean;
  readonly problem?: string;
}

function checkVolumes(vmi: VirtualMachineInstance): VolumeCheck {
  const claims = new Map((vmi.status?.volumeStatus ?? []).map((s) => [s.name, s.persistentVolumeClaimInfo]));
  const disks = vmi.spec.domain.devices?.disks ?? [];
  let blockMigration = false;
  let problem: string | undefined;
  for (const volume of vmi.spec.volumes ?? []) {
    let found: string | undefined;
    if (volume.persistentVolumeClaim !== undefined) {
      const claim = volume.persistentVolumeClaim.claimName;
      const info = claims.get(volume.name);
      if (info === undefined) found = `cannot tell whether PVC ${claim} is shared; a live migration needs every PVC shared (ReadWriteMany)`;
      else if (!(info.accessModes ?? []).includes('ReadWriteMany')) found = `PVC ${claim} is not shared; a live migration needs every PVC shared (ReadWriteMany)`;
    } else if (volume.hostDisk !== undefined) {
      if (volume.hostDisk.shared !== true) found = `hostDisk ${volume.name} is not shared (spec.volumes[].hostDisk.shared)`;
    } else if (!readOnlyCdrom(disks.find((d) => d.name === volume.name))) {
      blockMigration = true;
    }
    if (found !== undefined) {
      blockMigration = true;
      problem ??= found;
    }
  }
  return problem === undefined ? { blockMigration } : { blockMigration, problem };
}

function readOnlyCdrom(disk: { cdrom?: { readonly?: boolean } } | undefined): boolean {
  return disk?.cdrom !== undefined && disk.cdrom.readonly !== false;
}
