// A hotplugged volume's attachment pod, as KubeVirt's `hp-volume-*` pods: on the VMI's node
// (bound there directly, as the launcher pod already is), in its namespace, owned by the VMI,
// mounting the claim so that the kubelet attaches it to the node; its one container only waits.
// The handler finds the claim through this pod and brings it into the launcher pod.
//   Filesystem claim → mounted at /hotplug/<volume>; Block claim → a volumeDevice at
//   /dev/hotplug/<volume> (in the container's /dev, where a runtime makes device nodes).

import type { V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import { APP_LABEL, CREATED_BY_LABEL, HOTPLUG_DISK_APP_LABEL_VALUE, HOTPLUG_VOLUME_LABEL, VMI_API_VERSION, VMI_KIND, type VirtualMachineInstance } from '@podvirt/api';

export const ATTACHMENT_POD_PREFIX = 'hp-volume-';
export const ATTACHMENT_MOUNT_DIR = '/hotplug';
export const ATTACHMENT_DEVICE_DIR = '/dev/hotplug';

// Waits for SIGTERM without a loop; the image's shell is all it needs.
const WAIT = 'trap "exit 0" TERM; sleep infinity & wait';

export function renderAttachmentPod(vmi: VirtualMachineInstance, volume: string, claim: V1PersistentVolumeClaim, image: string): V1Pod {
  const name = vmi.metadata.name ?? '';
  const block = claim.spec?.volumeMode === 'Block';
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      generateName: ATTACHMENT_POD_PREFIX,
      namespace: vmi.metadata.namespace ?? '',
      labels: { [APP_LABEL]: HOTPLUG_DISK_APP_LABEL_VALUE, [CREATED_BY_LABEL]: vmi.metadata.uid ?? '', [HOTPLUG_VOLUME_LABEL]: volume },
      ownerReferences: [{ apiVersion: VMI_API_VERSION, kind: VMI_KIND, name, uid: vmi.metadata.uid ?? '', controller: true, blockOwnerDeletion: true }],
    },
    spec: {
      nodeName: vmi.status?.nodeName ?? '',
      restartPolicy: 'Never',
      terminationGracePeriodSeconds: 5,
      automountServiceAccountToken: false,
      containers: [
        {
          name: 'hotplug-disk',
          image,
          command: ['/bin/sh', '-c', WAIT],
          resources: { requests: { cpu: '10m', memory: '8Mi' }, limits: { cpu: '100m', memory: '32Mi' } },
          ...(block ? { volumeDevices: [{ name: volume, devicePath: `${ATTACHMENT_DEVICE_DIR}/${volume}` }] } : { volumeMounts: [{ name: volume, mountPath: `${ATTACHMENT_MOUNT_DIR}/${volume}` }] }),
        },
      ],
      volumes: [{ name: volume, persistentVolumeClaim: { claimName: claim.metadata?.name ?? '' } }],
    },
  };
}
