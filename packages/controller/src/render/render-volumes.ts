// The launcher pod's share of the VMI's persistent volumes, placed where KubeVirt's
// virt-controller places them so the launcher finds each at its KubeVirt path:
//   persistentVolumeClaim, Filesystem  → mounted at /var/run/kubevirt-private/vmi-disks/<volume>
//   persistentVolumeClaim, Block       → a volumeDevice at /dev/<volume>
//   hostDisk                           → the allowed directory holding its path (hostPath
//                                        Directory, never created) at vmi-disks/<volume><that dir>,
//                                        so the file is at vmi-disks/<volume><path> in the pod
//   cloudInitNoCloud secretRef         → Secret volume <volume>-udata, keys userdata/userData
//                                        at /var/run/kubevirt-private/secret/<volume>/
//   cloudInitNoCloud networkDataSecretRef → <volume>-ndata, keys networkdata/networkData, same dir

import { posix } from 'node:path';
import type { V1PersistentVolumeClaim, V1Volume, V1VolumeDevice, V1VolumeMount } from '@kubernetes/client-node';
import { formatFieldErrors, type VirtualMachineInstance } from '@podvirt/api';
import { ControllerError } from '../controller-error.js';
import { allowedDirOf, checkHostDisks, HOST_DISK_OFF, type HostDiskPolicy } from '../decide/host-disk-policy.js';
import { KUBEVIRT_PRIVATE_DIR, LAUNCHER_VOLUMES } from '../launcher-layout.js';

export const VMI_DISKS_DIR = `${KUBEVIRT_PRIVATE_DIR}/vmi-disks`;
export const SECRET_SOURCE_DIR = `${KUBEVIRT_PRIVATE_DIR}/secret`;

export interface RenderedVolumes {
  readonly volumes: V1Volume[];
  readonly mounts: V1VolumeMount[];
  readonly devices: V1VolumeDevice[];
}

function secretMounts(podVolume: string, dir: string, keys: readonly string[]): V1VolumeMount[] {
  return keys.map((key) => ({ name: podVolume, mountPath: posix.join(dir, key), subPath: key, readOnly: true }));
}

export function renderVolumes(vmi: VirtualMachineInstance, claims: ReadonlyMap<string, V1PersistentVolumeClaim> = new Map(), hostDiskPolicy: HostDiskPolicy = HOST_DISK_OFF): RenderedVolumes {
  const refused = checkHostDisks(vmi, hostDiskPolicy);
  if (refused.length > 0) throw new ControllerError('CONTROLLER_ERR_INVALID_VMI', formatFieldErrors(refused));
  const out: RenderedVolumes = { volumes: [], mounts: [], devices: [] };
  const fixed = new Set(LAUNCHER_VOLUMES.map((v) => v.name));
  const add = (volume: V1Volume): void => {
    if (fixed.has(volume.name)) {
      throw new ControllerError('CONTROLLER_ERR_INVALID_VMI', `spec.volumes: the name ${JSON.stringify(volume.name)} is taken by the launcher pod's own volume; rename it`);
    }
    out.volumes.push(volume);
  };
  for (const volume of vmi.spec.volumes ?? []) {
    const { name } = volume;
    const pvc = volume.persistentVolumeClaim;
    // A hotpluggable claim is mounted by its attachment pod, never by the launcher pod.
    if (pvc !== undefined && pvc.hotpluggable !== true) {
      add({ name, persistentVolumeClaim: { claimName: pvc.claimName, ...(pvc.readOnly === true ? { readOnly: true } : {}) } });
      if (claims.get(name)?.spec?.volumeMode === 'Block') out.devices.push({ name, devicePath: `/dev/${name}` });
      else out.mounts.push({ name, mountPath: posix.join(VMI_DISKS_DIR, name), ...(pvc.readOnly === true ? { readOnly: true } : {}) });
    }
    const hostDisk = volume.hostDisk;
    const allowed = hostDisk === undefined ? undefined : allowedDirOf(hostDisk.path, hostDiskPolicy);
    if (allowed !== undefined) {
      // The listed directory, never a directory under it: the kubelet resolves only what the
      // admin named, and the launcher walks the VMI's own components inside the mount. At a
      // path that mirrors the host's, the launcher finds the file without knowing the list.
      add({ name, hostPath: { path: allowed, type: 'Directory' } });
      out.mounts.push({ name, mountPath: posix.join(VMI_DISKS_DIR, name, allowed) });
    }
    const cloudInit = volume.cloudInitNoCloud;
    const dir = posix.join(SECRET_SOURCE_DIR, name);
    if (cloudInit?.secretRef?.name) {
      add({ name: `${name}-udata`, secret: { secretName: cloudInit.secretRef.name } });
      out.mounts.push(...secretMounts(`${name}-udata`, dir, ['userdata', 'userData']));
    }
    if (cloudInit?.networkDataSecretRef?.name) {
      add({ name: `${name}-ndata`, secret: { secretName: cloudInit.networkDataSecretRef.name } });
      out.mounts.push(...secretMounts(`${name}-ndata`, dir, ['networkdata', 'networkData']));
    }
  }
  return out;
}
