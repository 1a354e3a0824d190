// NodePatcher over the real API server: a merge patch on metadata only, so the handler never
// touches the kubelet's status or another controller's labels.

import { CoreV1Api, PatchStrategy, setHeaderOptions, type KubeConfig } from '@kubernetes/client-node';
import { fromKubeError } from '../kube/kube-error.js';
import type { NodeMetadataPatch, NodePatcher } from './node-patcher.js';

export class KubeNodePatcher implements NodePatcher {
  readonly #core: CoreV1Api;

  constructor(kc: KubeConfig) {
    this.#core = kc.makeApiClient(CoreV1Api);
  }

  async patchMetadata(nodeName: string, patch: NodeMetadataPatch, signal: AbortSignal): Promise<void> {
    signal.throwIfAborted();
    try {
      await this.#core.patchNode({ name: nodeName, body: { metadata: patch } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
    } catch (err) {
      throw fromKubeError(err, `patch node ${nodeName}`);
    }
  }
}
