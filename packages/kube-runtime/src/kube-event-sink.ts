// EventSink over the API server's core/v1 Events.

import type { CoreEvent, EventCountPatch, EventSink } from './event-sink.js';
import type { KubeClient } from './kube-client.js';
import { EVENTS, ResourceClient } from './resource-client.js';

export class KubeEventSink implements EventSink {
  readonly #events: ResourceClient<CoreEvent>;

  constructor(client: KubeClient) {
    this.#events = new ResourceClient<CoreEvent>(client, EVENTS);
  }

  async create(event: CoreEvent, signal: AbortSignal): Promise<CoreEvent> {
    const res: Partial<CoreEvent> = await this.#events.create(event.metadata.namespace, event, signal);
    return {
      ...event,
      metadata: { name: res.metadata?.name ?? event.metadata.name, namespace: res.metadata?.namespace ?? event.metadata.namespace },
      count: res.count ?? event.count,
    };
  }

  patchCount(namespace: string, name: string, patch: EventCountPatch, signal: AbortSignal): Promise<CoreEvent> {
    return this.#events.mergePatch(namespace, name, patch, signal);
  }
}
