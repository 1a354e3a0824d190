// A PVC volume as KubeVirt's launcher sees it: a filesystem claim is a directory the pod mounts
// at `<private>/vmi-disks/<volume>/`, holding the VM's disk as `disk.img`; a block claim is the
// device the pod puts at `/dev/<volume>`. Both were found and opened confined to the pod's mount
// beforehand (prepare/persistent-disks.ts); libvirt gets the opened descriptor's path.

import { VmiInvalidError, type PersistentVolumeClaimSource } from '@podvirt/api';
import type { ConverterContext } from './context.js';
import type { VolumeSource } from './volume-source.js';

export function persistentVolumeClaim(name: string, pvc: PersistentVolumeClaimSource, field: string, ctx: Pick<ConverterContext, 'persistentDisks'>): VolumeSource {
  const disk = ctx.persistentDisks.get(name);
  if (disk === undefined) throw VmiInvalidError.at(field, 'NotFound', `claim ${pvc.claimName} was not opened`);
  return {
    path: disk.path,
    format: 'raw',
    ...(disk.block ? { block: true } : {}),
    readonly: pvc.readOnly === true,
    persistent: true,
    discard: 'unmap',
  };
}
