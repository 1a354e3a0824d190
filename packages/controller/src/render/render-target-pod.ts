// The target launcher pod of a migration: the VMI's own launcher pod, rendered the same way, plus
// the migration's label (how the controller and the handlers tell it from the VMI's pod) and a
// required pod anti-affinity to every launcher pod of the same VMI on the same host, so that the
// scheduler places it on another node (KubeVirt's target pod carries the same rule).

import type { V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import { CREATED_BY_LABEL, MIGRATION_JOB_LABEL, MIGRATION_TARGET_NODE_LABEL, type VirtualMachineInstance } from '@podvirt/api';
import { renderLauncherPod, type LauncherPodConfig } from './render-launcher-pod.js';

export const HOSTNAME_TOPOLOGY_KEY = 'kubernetes.io/hostname';

export function renderTargetPod(vmi: VirtualMachineInstance, migrationUid: string, config: LauncherPodConfig, claims?: ReadonlyMap<string, V1PersistentVolumeClaim>): V1Pod {
  const pod = renderLauncherPod(vmi, config, claims);
  const metadata = pod.metadata ?? {};
  const labels: Record<string, string> = { ...metadata.labels, [MIGRATION_JOB_LABEL]: migrationUid };
  // The VMI's migration label describes the VMI, not a pod.
  delete labels[MIGRATION_TARGET_NODE_LABEL];
  const spec = pod.spec ?? { containers: [] };
  const antiAffinity = {
    labelSelector: { matchLabels: { [CREATED_BY_LABEL]: vmi.metadata.uid ?? '' } },
    topologyKey: HOSTNAME_TOPOLOGY_KEY,
  };
  const existing = spec.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? [];
  return {
    ...pod,
    metadata: { ...metadata, labels },
    spec: {
      ...spec,
      affinity: {
        ...spec.affinity,
        podAntiAffinity: { ...spec.affinity?.podAntiAffinity, requiredDuringSchedulingIgnoredDuringExecution: [...existing, antiAffinity] },
      },
    },
  };
}
