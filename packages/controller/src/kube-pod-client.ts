// PodClient over the core v1 API.

import { CoreV1Api, type KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { apiFailure } from './api-failure.js';
import type { PodClient } from './cluster-roles.js';

export class KubePodClient implements PodClient {
  readonly #api: CoreV1Api;

  constructor(kubeConfig: KubeConfig) {
    this.#api = kubeConfig.makeApiClient(CoreV1Api);
  }

  async create(namespace: string, pod: V1Pod): Promise<V1Pod> {
    try {
      return await this.#api.createNamespacedPod({ namespace, body: pod });
    } catch (err) {
      throw apiFailure(err, `create pod in ${namespace}`);
    }
  }

  async delete(namespace: string, name: string, uid: string | undefined): Promise<void> {
    try {
      const body = uid === undefined ? {} : { preconditions: { uid } };
      await this.#api.deleteNamespacedPod({ namespace, name, body });
    } catch (err) {
      const failure = apiFailure(err, `delete pod ${namespace}/${name}`);
      // Gone already, or replaced by a namesake (the UID precondition failed): ours is gone.
      if (failure.code === 'CONTROLLER_NOT_FOUND' || failure.code === 'CONTROLLER_CONFLICT') return;
      throw failure;
    }
  }
}
