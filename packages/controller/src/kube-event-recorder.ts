// EventRecorder writing core v1 Events against the VMI, as kubectl describe shows them.

import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import type { EventType, VirtualMachineInstance } from '@podvirt/api';
import { eventNamePrefix } from '@podvirt/kube-runtime';
import type { Logger } from 'pino';
import type { EventRecorder } from './cluster-roles.js';

export const EVENT_SOURCE_COMPONENT = 'podvirt-controller';

export class KubeEventRecorder implements EventRecorder {
  readonly #api: CoreV1Api;
  readonly #log: Logger;
  readonly #instance: string;

  constructor(kubeConfig: KubeConfig, log: Logger, instance: string) {
    this.#api = kubeConfig.makeApiClient(CoreV1Api);
    this.#log = log;
    this.#instance = instance;
  }

  async record(vmi: VirtualMachineInstance, type: EventType, reason: string, message: string): Promise<void> {
    const namespace = vmi.metadata.namespace ?? 'default';
    const now = new Date();
    try {
      await this.#api.createNamespacedEvent({
        namespace,
        body: {
          // The API server appends 5 characters to generateName; a 253-character VMI name must still fit.
          metadata: { generateName: eventNamePrefix(vmi.metadata.name ?? 'vmi', 5), namespace },
          involvedObject: {
            apiVersion: vmi.apiVersion,
            kind: vmi.kind,
            name: vmi.metadata.name ?? '',
            namespace,
            ...(vmi.metadata.uid === undefined ? {} : { uid: vmi.metadata.uid }),
            ...(vmi.metadata.resourceVersion === undefined ? {} : { resourceVersion: vmi.metadata.resourceVersion }),
          },
          type,
          reason,
          message,
          count: 1,
          firstTimestamp: now,
          lastTimestamp: now,
          source: { component: EVENT_SOURCE_COMPONENT },
          reportingComponent: EVENT_SOURCE_COMPONENT,
          reportingInstance: this.#instance,
        },
      });
    } catch (err) {
      this.#log.warn({ err, reason }, 'cannot record event');
    }
  }
}
