// PodClient over the core v1 API.

import type { V1Pod } from '@kubernetes/client-node';
import type { KubeClient } from '@podvirt/kube-runtime';
import { apiFailure } from './api-failure.js';
import type { PodClient } from './cluster-roles.js';

function podsPath(namespace: string): string {
  return `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods`;
}

export class KubePodClient implements PodClient {
  readonly #client: KubeClient;

  constructor(client: KubeClient) {
    this.#client = client;
  }

  async create(namespace: string, pod: V1Pod, signal?: AbortSignal): Promise<V1Pod> {
    try {
      return await this.#client.request<V1Pod>({ method: 'POST', path: podsPath(namespace), body: pod, ...(signal === undefined ? {} : { signal }) });
    } catch (err) {
      throw apiFailure(err, `create pod in ${namespace}`);
    }
  }

  async delete(namespace: string, name: string, uid: string | undefined, signal?: AbortSignal): Promise<void> {
    try {
      const body = uid === undefined ? {} : { preconditions: { uid } };
      await this.#client.request({ method: 'DELETE', path: `${podsPath(namespace)}/${encodeURIComponent(name)}`, body, ...(signal === undefined ? {} : { signal }) });
    } catch (err) {
      const failure = apiFailure(err, `delete pod ${namespace}/${name}`);
      // Gone already, or replaced by a namesake (the UID precondition failed): ours is gone.
      if (failure.code === 'CONTROLLER_NOT_FOUND' || failure.code === 'CONTROLLER_CONFLICT') return;
      throw failure;
    }
  }
}
