// The controller's view of Nodes: a kube-runtime informer over every Node (cluster-scoped, so
// `--namespace` does not narrow it), served as NodeStore and as the NodeHealth the VMI decision
// reads; and the NodeClient that labels a silent handler's node unschedulable. Kept apart from
// ClusterInformers so the node part is one removable piece.

import type { V1Node } from '@kubernetes/client-node';
import { NODE_SCHEDULABLE_LABEL, type EventType } from '@podvirt/api';
import { EventRecorder, Informer, KubeEventSink, NODES, ResourceClient, type KubeClient } from '@podvirt/kube-runtime';
import type { Logger } from 'pino';
import { nodeHeartbeat, type NodeHealth } from '../decide/node-heartbeat.js';
import { apiFailure } from './api-failure.js';
import { DEFAULT_RESTART_DELAY_MS, DEFAULT_RESYNC_MS } from './cluster-informers.js';
import type { NodeClient, NodeStore } from './cluster-roles.js';

export interface NodeInformerOptions {
  readonly client: KubeClient;
  readonly log: Logger;
  readonly onNode: (node: V1Node) => void;
  /** How long a handler may be silent before its node counts as unresponsive. */
  readonly heartbeatTimeoutMs: number;
  readonly resyncMs?: number;
}

export class NodeInformer implements NodeStore, NodeHealth {
  readonly #nodes: Informer<V1Node>;
  readonly #timeoutMs: number;

  constructor(options: NodeInformerOptions) {
    this.#timeoutMs = options.heartbeatTimeoutMs;
    this.#nodes = new Informer<V1Node>({
      source: new ResourceClient<V1Node>(options.client, NODES).listWatch(undefined),
      onEvent: (_type, node) => options.onNode(node),
      log: options.log.child({ informer: 'nodes' }),
      resyncPeriodMs: options.resyncMs ?? DEFAULT_RESYNC_MS,
      retryMs: DEFAULT_RESTART_DELAY_MS,
    });
  }

  getNode(name: string): V1Node | undefined {
    return this.#nodes.get(name);
  }

  listNodes(): V1Node[] {
    return this.#nodes.list();
  }

  isUnresponsive(nodeName: string, now: Date): boolean {
    return nodeHeartbeat(this.getNode(nodeName), now, this.#timeoutMs).kind === 'unresponsive';
  }

  async start(signal: AbortSignal): Promise<void> {
    this.#nodes.start();
    await this.#nodes.waitForSync(signal);
  }

  /** Stops the watch and its timers. Idempotent. */
  close(): Promise<void> {
    return this.#nodes.close();
  }
}

/** A Node's Event reference: cluster-scoped (no namespace; the recorder files it in `default`, as client-go does). */
function nodeReference(node: V1Node): { apiVersion: string; kind: string; namespace: string; name: string; uid: string } {
  return { apiVersion: 'v1', kind: 'Node', namespace: '', name: node.metadata?.name ?? '', uid: node.metadata?.uid ?? '' };
}

export interface KubeNodeClient extends NodeClient {
  /** Flushes pending Events. Idempotent. */
  close(): Promise<void>;
}

export function kubeNodeClient(client: KubeClient, log: Logger, component: string, instance: string): KubeNodeClient {
  const nodes = new ResourceClient<V1Node>(client, NODES);
  const events = new EventRecorder<V1Node>({ sink: new KubeEventSink(client), reference: nodeReference, component, instance, log: log.child({ subcomponent: 'events' }), now: Date.now });
  return {
    // A merge patch of one label: the kubelet's status and every other label stay as they are.
    markUnschedulable: async (nodeName, signal) => {
      try {
        await nodes.mergePatch(undefined, nodeName, { metadata: { labels: { [NODE_SCHEDULABLE_LABEL]: 'false' } } }, signal);
      } catch (err) {
        throw apiFailure(err, `label node ${nodeName} unschedulable`);
      }
    },
    recordNode: (node, type: EventType, reason, message) => events.record(node, type, reason, message),
    close: () => events.close(),
  };
}
