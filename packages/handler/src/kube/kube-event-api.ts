// EventApi over the real API server (core/v1 Events).

import { CoreV1Api, PatchStrategy, setHeaderOptions, type CoreV1Event, type KubeConfig } from '@kubernetes/client-node';
import type { CoreEvent, EventApi, EventCountPatch } from './event-api.js';
import { fromKubeError } from './kube-error.js';

export class KubeEventApi implements EventApi {
  readonly #core: CoreV1Api;

  constructor(kc: KubeConfig) {
    this.#core = kc.makeApiClient(CoreV1Api);
  }

  async create(event: CoreEvent, signal: AbortSignal): Promise<CoreEvent> {
    signal.throwIfAborted();
    try {
      // Timestamps stay RFC 3339 strings; the client's serializer passes strings through.
      const res = await this.#core.createNamespacedEvent({ namespace: event.metadata.namespace, body: event as unknown as CoreV1Event });
      return merged(event, res);
    } catch (err) {
      throw fromKubeError(err, `create event ${event.reason}`);
    }
  }

  async patchCount(namespace: string, name: string, patch: EventCountPatch, signal: AbortSignal): Promise<CoreEvent> {
    signal.throwIfAborted();
    try {
      const res = await this.#core.patchNamespacedEvent(
        { namespace, name, body: patch },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
      return res as unknown as CoreEvent;
    } catch (err) {
      throw fromKubeError(err, `patch event ${namespace}/${name}`);
    }
  }
}

function merged(sent: CoreEvent, res: CoreV1Event): CoreEvent {
  return {
    ...sent,
    metadata: { name: res.metadata.name ?? sent.metadata.name, namespace: res.metadata.namespace ?? sent.metadata.namespace },
    count: res.count ?? sent.count,
  };
}
