// EventSink over the API server's core/v1 Events.

import type { CoreEvent, EventCountPatch, EventSink } from './event-sink.js';
import { MERGE_PATCH, type KubeClient } from './kube-client.js';

function eventsPath(namespace: string): string {
  return `/api/v1/namespaces/${encodeURIComponent(namespace)}/events`;
}

export class KubeEventSink implements EventSink {
  readonly #client: KubeClient;

  constructor(client: KubeClient) {
    this.#client = client;
  }

  async create(event: CoreEvent, signal: AbortSignal): Promise<CoreEvent> {
    const res = await this.#client.request<Partial<CoreEvent>>({ method: 'POST', path: eventsPath(event.metadata.namespace), body: event, signal });
    return {
      ...event,
      metadata: { name: res.metadata?.name ?? event.metadata.name, namespace: res.metadata?.namespace ?? event.metadata.namespace },
      count: res.count ?? event.count,
    };
  }

  patchCount(namespace: string, name: string, patch: EventCountPatch, signal: AbortSignal): Promise<CoreEvent> {
    return this.#client.request<CoreEvent>({
      method: 'PATCH', path: `${eventsPath(namespace)}/${encodeURIComponent(name)}`, body: patch, contentType: MERGE_PATCH, signal,
    });
  }
}
