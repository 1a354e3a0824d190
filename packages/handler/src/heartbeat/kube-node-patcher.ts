// NodePatcher over the real API server: a merge patch on metadata only, so the handler never
// touches the kubelet's status or another controller's labels.

import { MERGE_PATCH, type KubeClient } from '@podvirt/kube-runtime';
import { fromKubeError } from '../kube/kube-error.js';
import type { NodeMetadataPatch, NodePatcher } from './node-patcher.js';

export class KubeNodePatcher implements NodePatcher {
  readonly #client: KubeClient;

  constructor(client: KubeClient) {
    this.#client = client;
  }

  async patchMetadata(nodeName: string, patch: NodeMetadataPatch, signal: AbortSignal): Promise<void> {
    try {
      await this.#client.request({
        method: 'PATCH', path: `/api/v1/nodes/${encodeURIComponent(nodeName)}`, body: { metadata: patch }, contentType: MERGE_PATCH, signal,
      });
    } catch (err) {
      throw fromKubeError(err, `patch node ${nodeName}`);
    }
  }
}
