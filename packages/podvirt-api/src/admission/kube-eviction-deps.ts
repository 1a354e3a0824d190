// The eviction webhook's reads and writes on the API server: the pod and its VMI, the VMI's
// migrations (to say where its evacuation stands), the VMI's evacuation mark (a merge patch of
// its status, which only names that field), and a Warning Event on the VMI recorded as podvirt-api.

import { MIGRATION_RESOURCE, vmiReference, VMI_RESOURCE, type EvictionStrategy, type VirtualMachineInstance, type VirtualMachineInstanceMigration } from '@podvirt/api';
import { EventRecorder, KubeEventSink, PODS, ResourceClient, type KubeClient } from '@podvirt/kube-runtime';
import type { Logger } from 'pino';
import type { EvictedPod, PodEvictionDeps } from './pod-eviction-admitter.js';

export const API_EVENT_COMPONENT = 'podvirt-api';

export interface KubeEvictionDeps {
  readonly deps: PodEvictionDeps;
  /** Flushes pending Events (bounded). Idempotent. */
  readonly close: () => Promise<void>;
}

export function kubeEvictionDeps(client: KubeClient, log: Logger, clusterDefault: EvictionStrategy, instance: string): KubeEvictionDeps {
  const pods = new ResourceClient<EvictedPod>(client, PODS);
  const vmis = new ResourceClient<VirtualMachineInstance>(client, VMI_RESOURCE);
  const migrations = new ResourceClient<VirtualMachineInstanceMigration>(client, MIGRATION_RESOURCE);
  const events = new EventRecorder<VirtualMachineInstance>({
    sink: new KubeEventSink(client),
    reference: vmiReference,
    component: API_EVENT_COMPONENT,
    instance,
    log: log.child({ subcomponent: 'events' }),
    now: Date.now,
  });
  return {
    deps: {
      getPod: (namespace, name, signal) => pods.get(namespace, name, signal),
      getVmi: (namespace, name, signal) => vmis.get(namespace, name, signal),
      // Every migration of the namespace: a migration carries no label naming its VMI.
      listMigrations: async (namespace, vmiName, signal) => (await migrations.list(namespace, {}, signal)).items.filter((m) => m.spec?.vmiName === vmiName),
      markForEvacuation: async (vmi, nodeName, signal) => {
        await vmis.mergePatchStatus(vmi.metadata.namespace, vmi.metadata.name ?? '', { status: { evacuationNodeName: nodeName } }, signal);
      },
      warn: (vmi, reason, message) => void events.record(vmi, 'Warning', reason, message),
      clusterDefault,
    },
    close: () => events.close(),
  };
}
