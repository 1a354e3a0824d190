// The node part of the controller, keyed by Node name: a node whose handler stopped beating
// (node-heartbeat.ts) is labelled `kubevirt.io/schedulable=false`, so no new launcher pod lands
// there, with a Normal `NodeUnresponsive` Event on the Node; whenever a node's judgement flips
// (silent, or beating again) the VMIs on it are handed to the VMI controller, whose decision
// marks them (Ready=False `NodeUnresponsive`; failed only once their launcher is gone) or
// recomputes them from their pods. Nothing is deleted here. A fresh node is looked at again when
// its stamp would go stale; a silent one only when it changes (its handler's next beat), so a
// node that is gone costs no API call. The handler relabels its node schedulable when it beats.

import type { V1Node } from '@kubernetes/client-node';
import { EventType, HEARTBEAT_ANNOTATION, NODE_SCHEDULABLE_LABEL } from '@podvirt/api';
import type { ItemBackoffOptions } from '@podvirt/kube-runtime';
import type { Logger } from 'pino';
import { isNodeSchedulable, NODE_UNRESPONSIVE_REASON, nodeHeartbeat } from '../decide/node-heartbeat.js';
import type { NodeClient, NodeStore } from '../kube/cluster-roles.js';
import { KeyedWorkers, type KeyedSyncResult, type QueueObserver } from './keyed-workers.js';

export interface NodeControllerDeps {
  readonly nodes: NodeStore;
  readonly client: NodeClient;
  readonly heartbeatTimeoutMs: number;
  readonly now: () => Date;
  /** The node's judgement flipped (or was first made): its VMIs look again. */
  readonly healthChanged: (nodeName: string, unresponsive: boolean) => void;
}

export interface NodeControllerOptions {
  readonly deps: NodeControllerDeps;
  readonly log: Logger;
  readonly queue?: ItemBackoffOptions;
  readonly queueObserver?: QueueObserver;
}

export class NodeController {
  readonly #o: NodeControllerOptions;
  readonly #workers: KeyedWorkers;
  /** Node name → the last judgement handed on; a restart hands every node's on once. */
  readonly #judged = new Map<string, boolean>();

  constructor(options: NodeControllerOptions) {
    this.#o = options;
    this.#workers = new KeyedWorkers({
      workers: 1,
      ...(options.queue === undefined ? {} : { queue: options.queue }),
      keys: () => options.deps.nodes.listNodes().flatMap((n) => (n.metadata?.name ? [n.metadata.name] : [])),
      sync: (key, log, signal) => this.#sync(key, log, signal),
      log: (key) => options.log.child({ node: key }),
      failure: 'node sync failed, requeueing',
      ...(options.queueObserver === undefined ? {} : { observer: options.queueObserver }),
    });
  }

  get queueDepth(): number {
    return this.#workers.depth;
  }

  nodeChanged(node: V1Node): void {
    if (node.metadata?.name) this.#workers.add(node.metadata.name);
  }

  run(signal: AbortSignal): Promise<void> {
    return this.#workers.run(signal);
  }

  async #sync(name: string, log: Logger, signal: AbortSignal): Promise<KeyedSyncResult> {
    const { deps } = this.#o;
    const node = deps.nodes.getNode(name);
    const now = deps.now();
    const heartbeat = nodeHeartbeat(node, now, deps.heartbeatTimeoutMs);
    const unresponsive = heartbeat.kind === 'unresponsive';
    if (node !== undefined && unresponsive && isNodeSchedulable(node)) {
      const stamp = node.metadata?.annotations?.[HEARTBEAT_ANNOTATION] ?? '';
      await deps.client.markUnschedulable(name, signal);
      log.warn({ lastHeartbeat: stamp, timeoutMs: deps.heartbeatTimeoutMs }, 'handler unresponsive: node labelled unschedulable');
      void deps.client.recordNode(node, EventType.Normal, NODE_UNRESPONSIVE_REASON, `no handler heartbeat since ${stamp} (timeout ${deps.heartbeatTimeoutMs / 1000}s): labelled ${NODE_SCHEDULABLE_LABEL}=false`);
    }
    if (node === undefined) this.#judged.delete(name);
    else if (this.#judged.get(name) !== unresponsive) {
      // A run starts with every VMI queued anyway: a node first seen fresh changes nothing.
      const flipped = this.#judged.has(name) || unresponsive;
      this.#judged.set(name, unresponsive);
      if (flipped) {
        log.info({ unresponsive }, unresponsive ? 'node unresponsive: its VMIs are marked' : 'node responsive again: its VMIs are reconciled');
        deps.healthChanged(name, unresponsive);
      }
    }
    return heartbeat.kind === 'responsive' ? { requeueAfterMs: heartbeat.staleInMs } : {};
  }
}
