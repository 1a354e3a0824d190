// NodePatcher over the real API server: a merge patch on metadata only, so the handler never
// touches the kubelet's status or another controller's labels.

import { NODES, ResourceClient, type KubeClient } from '@podvirt/kube-runtime';
import { fromKubeError } from '../kube/kube-error.js';
import type { NodeMetadataPatch, NodePatcher } from './node-patcher.js';

export class KubeNodePatcher implements NodePatcher {
  readonly #nodes: ResourceClient<{ metadata?: { name?: string } }>;

  constructor(client: KubeClient) {
    this.#nodes = new ResourceClient(client, NODES);
  }

  async patchMetadata(nodeName: string, patch: NodeMetadataPatch, signal: AbortSignal): Promise<void> {
    try {
      await this.#nodes.mergePatch(undefined, nodeName, { metadata: patch }, signal);
    } catch (err) {
      throw fromKubeError(err, `patch node ${nodeName}`);
    }
  }
}
