import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { CoreV1Api, ListWatch, PatchStrategy, setHeaderOptions, Watch, type KubeConfig, type V1Pod } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { EventRecorder } from '../scheduler/event-recorder.js';
import { defaultImageTable, imageMapFrom, type ImageMap } from './image-map.js';
import { repoRoot } from '../guest/repo-root.js';
import { LogServer } from './log-server.js';
import { nodeObject, nodeStatus } from './node-object.js';
import { PodWorker } from './pod-worker.js';
import { PodNetwork } from '../sandbox/pod-network.js';
import { processRuntime, type ContainerRuntime } from './container-runtime.js';
import { DevicePluginRegistry, withDeviceResources } from './device-plugin-registry.js';
import { unmountAllUnder } from './pod-mounts.js';

export interface KubeletOptions {
  kubeConfig: KubeConfig;
  nodeName: string;
  /** Holds `pods/<uid>/volumes/kubernetes.io~empty-dir/<volume>` and the containers' state. */
  rootDir: string;
  /** Without one, the default table (see image-map.ts). */
  imageMap?: ImageMap;
  /** The node binary the launcher image runs (default: `node` on the container's PATH). */
  nodeBinary?: string;
  logger: Logger;
  hostIP?: string;
  statusIntervalMs?: number;
  restartDelayMs?: number;
  /** Grace for pods still running when the kubelet itself stops. */
  shutdownGraceMs?: number;
  /** How containers are started inside each pod's sandbox (default: process trees, see container-runtime.ts). */
  runtime?: ContainerRuntime;
  /** Where the CNI plugins are (default: Debian's /usr/lib/cni). */
  cniPath?: string;
  /** Another kubelet's pod network to join (a second node on the same testbed); that kubelet owns it. */
  network?: PodNetwork;
  /** Where device plugins' host paths are looked up (default `/`; a test's fake device tree). */
  deviceHostRoot?: string;
  /** The serving certificate of its log endpoint, which then speaks HTTPS (the real control plane's API server wants that). */
  servingCert?: { readonly cert: string; readonly key: string };
}

/**
 * The testbed's kubelet: registers its Node and keeps it Ready, runs the pods bound to it
 * (one PodWorker each), serves their logs, and completes their graceful deletion.
 */
export class Kubelet {
  readonly #core: CoreV1Api;
  readonly #workers = new Map<string, PodWorker>();
  readonly #pods: ListWatch<V1Pod>;
  readonly #logs: LogServer;
  readonly #log: Logger;
  readonly #hostIP: string;
  readonly #readySince = new Date();
  readonly #imageMap: ImageMap;
  readonly #network: PodNetwork;
  readonly #runtime: ContainerRuntime;
  /** Device plugins register on `<root>/device-plugins/kubelet.sock`. */
  readonly devicePlugins: DevicePluginRegistry;
  #beatSoon: (() => void) | undefined;
  #heartbeat: NodeJS.Timeout | undefined;
  #restart: NodeJS.Timeout | undefined;
  #closing: Promise<void> | undefined;
  #closed = false;

  constructor(private readonly options: KubeletOptions) {
    this.#core = options.kubeConfig.makeApiClient(CoreV1Api);
    this.#log = options.logger.child({ component: 'kubelet', node: options.nodeName });
    this.#hostIP = options.hostIP ?? '127.0.0.1';
    this.#imageMap = options.imageMap ?? imageMapFrom(defaultImageTable({
      repoRoot: repoRoot(import.meta.url), node: options.nodeBinary ?? 'node',
    }));
    this.#network = options.network ?? new PodNetwork({ rootDir: options.rootDir, log: this.#log, ...(options.cniPath === undefined ? {} : { cniPath: options.cniPath }) });
    this.#runtime = options.runtime ?? processRuntime();
    this.devicePlugins = new DevicePluginRegistry({ dir: join(options.rootDir, 'device-plugins'), log: this.#log, onChange: () => this.#beatSoon?.() });
    this.#logs = new LogServer((ns, name) => [...this.#workers.values()].find((w) => w.pod.metadata?.namespace === ns && w.pod.metadata.name === name), options.servingCert);
    const selector = `spec.nodeName=${options.nodeName}`;
    this.#pods = new ListWatch<V1Pod>('/api/v1/pods', new Watch(options.kubeConfig), () => this.#core.listPodForAllNamespaces({ fieldSelector: selector }), false, undefined, selector);
    this.#pods.on('add', (pod) => this.#onPod(pod));
    this.#pods.on('update', (pod) => this.#onPod(pod));
    this.#pods.on('delete', (pod) => this.#onGone(pod));
    this.#pods.on('error', (err: unknown) => {
      // Stopping the informer aborts its watch, which it reports as an error.
      if (this.#closed) return;
      this.#log.warn({ err }, 'pod watch failed, restarting');
      this.#restart = setTimeout(() => void this.#pods.start().catch(() => undefined), 1000);
    });
  }

  /** This stack's pod network (bridge, subnet, CNI state dirs). */
  get network(): PodNetwork {
    return this.#network;
  }

  async start(): Promise<void> {
    if (this.options.network === undefined) await this.#network.start();
    const port = await this.#logs.listen(this.#hostIP);
    const name = this.options.nodeName;
    try {
      await this.#core.createNode({ body: nodeObject(name) });
    } catch (err) {
      if ((err as { code?: number }).code !== 409) throw err;
    }
    const beat = async (): Promise<void> => {
      await this.#core.patchNodeStatus(
        { name, body: { status: withDeviceResources(nodeStatus(name, this.#hostIP, port, new Date(), this.#readySince), this.devicePlugins.resources()) } },
        setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
      );
    };
    await beat();
    let queued = false;
    this.#beatSoon = () => {
      if (queued || this.#closed) return;
      queued = true;
      setImmediate(() => {
        queued = false;
        void beat().catch((err: unknown) => this.#log.warn({ err }, 'node status update failed'));
      });
    };
    await this.devicePlugins.start();
    this.#heartbeat = setInterval(() => void beat().catch((err: unknown) => this.#log.warn({ err }, 'node status update failed')), this.options.statusIntervalMs ?? 10_000);
    await this.#pods.start();
    this.#log.info({ port }, 'kubelet running');
  }

  #onPod(pod: V1Pod): void {
    const uid = pod.metadata?.uid;
    if (uid === undefined || this.#closed) return;
    const existing = this.#workers.get(uid);
    if (existing !== undefined) {
      existing.update(pod);
      return;
    }
    const terminal = pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
    if (terminal && pod.metadata?.deletionTimestamp === undefined) return;
    const worker = new PodWorker(
      {
        core: this.#core,
        events: new EventRecorder(this.#core, 'kubelet', this.options.nodeName),
        imageMap: this.#imageMap,
        rootDir: this.options.rootDir,
        hostIP: this.#hostIP,
        log: this.#log,
        restartDelayMs: this.options.restartDelayMs ?? 1000,
        runtime: this.#runtime,
        network: this.#network,
        devices: { registry: this.devicePlugins, hostRoot: this.options.deviceHostRoot ?? '/' },
      },
      pod,
    );
    this.#workers.set(uid, worker);
    if (pod.metadata?.deletionTimestamp !== undefined) worker.update(pod);
  }

  /** The pod is gone from the API (force-deleted, or our own final delete): nothing may keep running. */
  #onGone(pod: V1Pod): void {
    const uid = pod.metadata?.uid;
    const worker = uid === undefined ? undefined : this.#workers.get(uid);
    if (uid === undefined || worker === undefined) return;
    void worker.terminate(0, false).finally(() => this.#workers.delete(uid));
  }

  close(): Promise<void> {
    this.#closed = true;
    this.#closing ??= (async () => {
      clearInterval(this.#heartbeat);
      clearTimeout(this.#restart);
      await this.#pods.stop();
      await Promise.all([...this.#workers.values()].map((w) => w.terminate(this.options.shutdownGraceMs ?? 5000, false)));
      this.#workers.clear();
      await this.#logs.close();
      await this.devicePlugins.close();
      if (this.options.network === undefined) await this.#network.close();
      // A mount a pod worker could not take away (see pod-mounts.ts) keeps the root in place.
      if ((await unmountAllUnder(this.options.rootDir)).length === 0) await rm(this.options.rootDir, { recursive: true, force: true });
    })();
    return this.#closing;
  }
}
