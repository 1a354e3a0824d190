import { CoreV1Api, ListWatch, PatchStrategy, setHeaderOptions, Watch, type KubeConfig, type V1Node, type V1Pod } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { EventRecorder } from './event-recorder.js';
import { pickNode } from './pick-node.js';
import { antiAffinityForbids, requiredAntiAffinity } from './pod-anti-affinity.js';
import { addUsage, extendedUsage, insufficientResources, podExtendedResources } from './resource-fit.js';

export interface SchedulerOptions {
  kubeConfig: KubeConfig;
  logger: Logger;
  /** Pods naming another `spec.schedulerName` are left alone. */
  schedulerName?: string;
  /** Retry interval for pods no node fits yet (the real scheduler backs off up to 10 s). */
  retryMs?: number;
}

/**
 * The testbed's scheduler: binds every pending pod (no `spec.nodeName`) to a fitting node
 * through pods/binding and records `Scheduled` (or `FailedScheduling`) events.
 */
export class Scheduler {
  readonly #core: CoreV1Api;
  readonly #events: EventRecorder;
  readonly #log: Logger;
  readonly #name: string;
  readonly #pods: ListWatch<V1Pod>;
  readonly #nodes: ListWatch<V1Node>;
  readonly #failed = new Set<string>();
  readonly #restarts = new Set<NodeJS.Timeout>();
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> = Promise.resolve();
  #closed = false;

  constructor(private readonly options: SchedulerOptions) {
    this.#core = options.kubeConfig.makeApiClient(CoreV1Api);
    this.#name = options.schedulerName ?? 'default-scheduler';
    this.#events = new EventRecorder(this.#core, this.#name, this.#name);
    this.#log = options.logger.child({ component: 'scheduler' });
    const watch = new Watch(options.kubeConfig);
    this.#pods = new ListWatch<V1Pod>(
      '/api/v1/pods',
      watch,
      () => this.#core.listPodForAllNamespaces({ fieldSelector: 'spec.nodeName=' }),
      false,
      undefined,
      'spec.nodeName=',
    );
    this.#nodes = new ListWatch<V1Node>('/api/v1/nodes', watch, () => this.#core.listNode(), false);
    this.#pods.on('add', () => this.#kick());
    this.#pods.on('update', () => this.#kick());
    this.#nodes.on('add', () => this.#kick());
    this.#nodes.on('update', () => this.#kick());
    this.#pods.on('error', (err: unknown) => this.#onError(this.#pods, err));
    this.#nodes.on('error', (err: unknown) => this.#onError(this.#nodes, err));
  }

  async start(): Promise<void> {
    await Promise.all([this.#pods.start(), this.#nodes.start()]);
    this.#schedule((this.options.retryMs ?? 1000));
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    for (const timer of this.#restarts) clearTimeout(timer);
    await Promise.all([this.#pods.stop(), this.#nodes.stop()]);
    await this.#running;
  }

  #onError(informer: ListWatch<V1Pod> | ListWatch<V1Node>, err: unknown): void {
    if (this.#closed) return;
    this.#log.warn({ err }, 'watch failed, restarting');
    const timer = setTimeout(() => {
      this.#restarts.delete(timer);
      if (!this.#closed) void informer.start().catch(() => undefined);
    }, 1000);
    this.#restarts.add(timer);
  }

  #schedule(delayMs: number): void {
    clearTimeout(this.#timer);
    if (this.#closed) return;
    this.#timer = setTimeout(() => this.#kick(), delayMs);
    this.#timer.unref();
  }

  #kick(): void {
    if (this.#closed) return;
    this.#running = this.#running.then(() => this.#pass()).catch((err: unknown) => this.#log.warn({ err }, 'scheduling pass failed'));
  }

  async #pass(): Promise<void> {
    const nodes = this.#nodes.list();
    const podsPerNode = new Map<string, number>();
    let waiting = false;
    let usage: Map<string, Map<string, number>> | undefined;
    let allPods: V1Pod[] | undefined;
    // Placements are decided one pod at a time (each counts the ones before it); the bindings
    // go out together, as the real scheduler binds in a goroutine per pod: 20 pods created at
    // once reach the kubelet at once, not one API round trip (and Event) after another.
    const binds: Promise<void>[] = [];
    for (const pod of this.#pods.list()) {
      if (this.#closed) return;
      if (pod.spec?.nodeName !== undefined && pod.spec.nodeName !== '') continue;
      if (pod.metadata?.deletionTimestamp !== undefined || (pod.spec?.schedulerName ?? this.#name) !== this.#name) continue;
      const wanted = podExtendedResources(pod);
      if (wanted.size > 0) usage ??= extendedUsage((await this.#core.listPodForAllNamespaces()).items);
      if (requiredAntiAffinity(pod).length > 0) allPods ??= (await this.#core.listPodForAllNamespaces()).items;
      const used = usage;
      const bound = allPods ?? [];
      const fits = (node: V1Node): string[] => insufficientResources(wanted, node, used?.get(node.metadata?.name ?? ''));
      const placement = pickNode(pod, nodes, podsPerNode, fits, (node) => antiAffinityForbids(pod, node, nodes, bound));
      const key = `${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}`;
      if ('reason' in placement) {
        waiting = true;
        if (!this.#failed.has(key)) {
          this.#failed.add(key);
          await this.#markUnschedulable(pod, placement.reason);
          await this.#record(pod, 'Warning', 'FailedScheduling', placement.reason);
        }
        continue;
      }
      binds.push(this.#bind(pod, placement.node, key));
      if (usage !== undefined) addUsage(usage, placement.node, wanted);
      // Pods bound in this pass count for the next pod's anti-affinity.
      if (allPods !== undefined) allPods.push({ ...pod, spec: { ...pod.spec, containers: pod.spec?.containers ?? [], nodeName: placement.node } });
      podsPerNode.set(placement.node, (podsPerNode.get(placement.node) ?? 0) + 1);
    }
    await Promise.all(binds);
    if (waiting) this.#schedule(this.options.retryMs ?? 1000);
  }

  async #bind(pod: V1Pod, node: string, key: string): Promise<void> {
    const name = pod.metadata?.name ?? '';
    const namespace = pod.metadata?.namespace ?? 'default';
    try {
      await this.#core.createNamespacedBinding({
        namespace,
        body: { metadata: { name, namespace }, target: { apiVersion: 'v1', kind: 'Node', name: node } },
      });
    } catch (err) {
      // Bound or deleted meanwhile; the informer brings the news.
      this.#log.debug({ err, pod: key }, 'binding failed');
      return;
    }
    this.#failed.delete(key);
    this.#log.info({ pod: key, node }, 'bound pod');
    await this.#record(pod, 'Normal', 'Scheduled', `Successfully assigned ${key} to ${node}`);
  }

  /** What the real scheduler writes on a pod no node can take, and what `kubectl describe pod` shows. */
  async #markUnschedulable(pod: V1Pod, message: string): Promise<void> {
    const condition = { type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message, lastProbeTime: null, lastTransitionTime: new Date().toISOString() };
    try {
      await this.#core.patchNamespacedPodStatus(
        { namespace: pod.metadata?.namespace ?? 'default', name: pod.metadata?.name ?? '', body: { status: { conditions: [condition] } } },
        setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
      );
    } catch (err) {
      this.#log.debug({ err }, 'marking the pod unschedulable failed (deleted meanwhile?)');
    }
  }

  async #record(pod: V1Pod, type: 'Normal' | 'Warning', reason: string, message: string): Promise<void> {
    const regarding = { kind: 'Pod', apiVersion: 'v1', namespace: pod.metadata?.namespace ?? 'default', name: pod.metadata?.name ?? '', uid: pod.metadata?.uid ?? '' };
    await this.#events.record({ regarding, type, reason, message }).catch((err: unknown) => this.#log.warn({ err }, 'recording event failed'));
  }
}
