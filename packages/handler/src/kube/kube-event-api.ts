// EventApi over the real API server (core/v1 Events) through the thin Kubernetes client.

import { MERGE_PATCH, type KubeClient } from '@podvirt/kube-runtime';
import type { CoreEvent, EventApi, EventCountPatch } from './event-api.js';
import { fromKubeError } from './kube-error.js';

function eventsPath(namespace: string): string {
  return `/api/v1/namespaces/${encodeURIComponent(namespace)}/events`;
}

export class KubeEventApi implements EventApi {
  readonly #client: KubeClient;

  constructor(client: KubeClient) {
    this.#client = client;
  }

  async create(event: CoreEvent, signal: AbortSignal): Promise<CoreEvent> {
    try {
      const res = await this.#client.request<Partial<CoreEvent>>({ method: 'POST', path: eventsPath(event.metadata.namespace), body: event, signal });
      return {
        ...event,
        metadata: { name: res.metadata?.name ?? event.metadata.name, namespace: res.metadata?.namespace ?? event.metadata.namespace },
        count: res.count ?? event.count,
      };
    } catch (err) {
      throw fromKubeError(err, `create event ${event.reason}`);
    }
  }

  async patchCount(namespace: string, name: string, patch: EventCountPatch, signal: AbortSignal): Promise<CoreEvent> {
    try {
      return await this.#client.request<CoreEvent>({
        method: 'PATCH', path: `${eventsPath(namespace)}/${encodeURIComponent(name)}`, body: patch, contentType: MERGE_PATCH, signal,
      });
    } catch (err) {
      throw fromKubeError(err, `patch event ${namespace}/${name}`);
    }
  }
}
