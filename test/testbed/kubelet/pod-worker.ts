import { mkdir, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { PatchStrategy, setHeaderOptions, type CoreV1Api, type V1Container, type V1Pod } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { parseQuantity, toBytes } from '@podvirt/api';
import type { Container } from '../container/start-container.js';
import type { PodNetwork } from '../sandbox/pod-network.js';
import type { EventRecorder } from '../scheduler/event-recorder.js';
import { ContainerLogWriter } from './container-log.js';
import { containerDevices } from './container-devices.js';
import type { DevicePluginRegistry } from './device-plugin-registry.js';
import type { ContainerRuntime, ImageLookup } from './container-runtime.js';
import { containerBinds, containerEnv } from './container-spec.js';
import { unmountAllUnder } from './pod-mounts.js';
import { containerArgv, type ImageCommand, type ImageMap } from './image-map.js';
import { computePodStatus, podStatusPatch, type ContainerRecord, type PodSandboxState } from './pod-status.js';
import { podPaths, type PodPaths } from './pod-paths.js';
import { setUpVolumes, VolumeSetupError, type VolumeSources } from './pod-volumes.js';
import { volumeDeviceNodes } from './volume-devices.js';

export interface PodWorkerDeps {
  core: CoreV1Api;
  events: EventRecorder;
  imageMap: ImageMap;
  rootDir: string;
  hostIP: string;
  log: Logger;
  /** Delay before restarting a container under restartPolicy Always/OnFailure. */
  restartDelayMs: number;
  /** Starts the containers inside the sandbox. */
  runtime: ContainerRuntime;
  /** Makes and removes the pods' sandboxes (network namespace + CNI). */
  network: PodNetwork;
  /** Device plugins: allocations for containers with extended resources, from `hostRoot`'s nodes. */
  devices?: { registry: DevicePluginRegistry; hostRoot: string };
}

/** Longest wait between two attempts at a sandbox that CNI refused. */
const sandboxRetryCapMs = 30_000;
// The kubelet's image pull back-off tops out at 5 minutes.
const imagePullBackoffCapMs = 300_000;

interface Running {
  container: Container;
  logs: ContainerLogWriter;
  drained: Promise<void>;
}

/**
 * Runs one pod bound to this node: its containers as processes, its status in the API, and
 * its graceful end (SIGTERM, the grace period, SIGKILL; then its directories go and the
 * pod is deleted for good with a grace-0 delete).
 */
export class PodWorker {
  readonly paths: PodPaths;
  readonly records = new Map<string, ContainerRecord>();
  readonly initRecords = new Map<string, ContainerRecord>();
  readonly #running = new Map<string, Running>();
  readonly #timers = new Set<NodeJS.Timeout>();
  readonly #wakers = new Set<() => void>();
  readonly #log: Logger;
  readonly #startTime = new Date();
  #pod: V1Pod;
  #stopping: Promise<void> | undefined;
  #statusChain: Promise<void> = Promise.resolve();
  #sandbox: PodSandboxState = { podIPs: [] };
  #netnsPath: string | undefined;
  #sources: VolumeSources | undefined;
  readonly started: Promise<void>;

  constructor(private readonly deps: PodWorkerDeps, pod: V1Pod) {
    this.#pod = pod;
    this.paths = podPaths(deps.rootDir, pod.metadata?.uid ?? 'unknown');
    this.#log = deps.log.child({ namespace: pod.metadata?.namespace, name: pod.metadata?.name, uid: pod.metadata?.uid });
    const initializing = (pod.spec?.initContainers ?? []).length > 0;
    for (const c of pod.spec?.initContainers ?? []) {
      this.initRecords.set(c.name, {
        name: c.name, image: c.image ?? '', restartCount: 0, current: { state: 'waiting', reason: 'PodInitializing' }, init: true,
        ...(c.restartPolicy === 'Always' ? { sidecar: true } : {}),
      });
    }
    for (const c of pod.spec?.containers ?? []) {
      const reason = initializing ? 'PodInitializing' : 'ContainerCreating';
      this.records.set(c.name, { name: c.name, image: c.image ?? '', restartCount: 0, current: { state: 'waiting', reason } });
    }
    this.started = this.#start().catch((err: unknown) => this.#log.error({ err }, 'pod start failed'));
  }

  get pod(): V1Pod {
    return this.#pod;
  }

  /** A newer version of the pod from the API (deletion, readiness-gate conditions). */
  update(pod: V1Pod): void {
    this.#pod = pod;
    if (pod.metadata?.deletionTimestamp !== undefined) {
      void this.terminate((pod.metadata.deletionGracePeriodSeconds ?? 30) * 1000, true);
    } else {
      this.#syncStatus();
    }
  }

  /** Stops every container (SIGTERM, then SIGKILL after `graceMs`) and removes the pod's directories. */
  terminate(graceMs: number, confirmDeletion: boolean): Promise<void> {
    this.#stopping ??= (async () => {
      for (const wake of this.#wakers) wake();
      await this.started;
      for (const t of this.#timers) clearTimeout(t);
      await Promise.all([...this.#running.entries()].map(async ([name, r]) => {
        void this.#event('Normal', 'Killing', `Stopping container ${name}`);
        await r.container.stop({ graceMs }).catch((err: unknown) => this.#log.warn({ err, container: name }, 'stopping container failed'));
        await r.drained;
      }));
      // The sandbox outlives the containers: it goes only once the last one has ended.
      await this.deps.network.destroy(this.#pod.metadata?.uid ?? '').catch((err: unknown) => this.#log.warn({ err }, 'removing the pod sandbox failed'));
      this.deps.devices?.registry.release(this.#pod.metadata?.uid ?? '');
      await this.#flushStatus();
      // Claims and hotplugged disks are mounted below the pod's directory: never removed through.
      const stuck = await unmountAllUnder(this.paths.podDir);
      if (stuck.length === 0) await rm(this.paths.podDir, { recursive: true, force: true });
      else this.#log.error({ mounts: stuck }, 'pod directory still has mounts; left in place');
      if (confirmDeletion) await this.#confirmDeletion();
    })();
    return this.#stopping;
  }

  async #start(): Promise<void> {
    const pod = this.#pod;
    this.#syncStatus();
    // Volumes first, as the real kubelet waits for them before it makes the sandbox.
    this.#sources = await this.#mountVolumes();
    if (this.#sources === undefined) return;
    if (!(await this.#makeSandbox())) return;
    for (const c of pod.spec?.initContainers ?? []) {
      if (c.restartPolicy === 'Always') await this.#runSidecar(c);
      else if (!(await this.#runInitContainer(c))) return;
    }
    for (const c of pod.spec?.containers ?? []) await this.#startContainer(c);
  }

  /** Sets up the pod's volumes, reporting FailedMount and retrying until they are ready or the pod stops. */
  async #mountVolumes(): Promise<VolumeSources | undefined> {
    let reported = '';
    for (;;) {
      if (this.#stopping !== undefined) return undefined;
      try {
        return await setUpVolumes(this.deps.core, this.#pod, this.paths);
      } catch (err) {
        if (!(err instanceof VolumeSetupError)) throw err;
        if (err.message !== reported) {
          reported = err.message;
          void this.#event('Warning', 'FailedMount', err.message);
        }
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          this.#timers.delete(timer);
          resolve();
        }, this.deps.restartDelayMs);
        this.#timers.add(timer);
      });
    }
  }

  /**
   * A native sidecar (an init container with restartPolicy Always): started in init order
   * without waiting for it to end, restarted whenever it exits while the pod runs, and stopped
   * once every regular container has ended for good.
   */
  async #runSidecar(spec: V1Container): Promise<void> {
    const record = this.initRecords.get(spec.name);
    if (record === undefined) return;
    const started = await this.#startContainer(spec, record);
    void started?.code.then(async () => {
      if (this.#stopping !== undefined || this.#mainContainersDone()) return;
      if (!(await this.#sleep(this.deps.restartDelayMs)) || this.#mainContainersDone()) return;
      record.restartCount += 1;
      await this.#runSidecar(spec);
    });
  }

  /** Every regular container has terminated and the pod's restartPolicy restarts none of them. */
  #mainContainersDone(): boolean {
    const policy = this.#pod.spec?.restartPolicy ?? 'Always';
    const records = [...this.records.values()];
    if (policy === 'Always' || records.length === 0) return false;
    return records.every((r) => r.current.state === 'terminated' && (policy === 'Never' || r.current.exitCode === 0));
  }

  #stopSidecarsIfDone(): void {
    if (this.#stopping !== undefined || !this.#mainContainersDone()) return;
    const graceMs = (this.#pod.spec?.terminationGracePeriodSeconds ?? 30) * 1000;
    for (const [name, r] of this.#running) {
      if (this.initRecords.get(name)?.sidecar !== true) continue;
      void r.container.stop({ graceMs }).catch((err: unknown) => this.#log.warn({ err, container: name }, 'stopping sidecar failed'));
    }
  }

  /**
   * The pod's network namespace with its CNI address, before any container; a CNI failure
   * leaves the pod Pending with the error in its events and status, and is retried with
   * backoff as the kubelet does. hostNetwork pods use the host's network. False when stopping.
   */
  async #makeSandbox(): Promise<boolean> {
    if (this.#pod.spec?.hostNetwork === true) {
      this.#sandbox = { podIPs: [this.deps.hostIP] };
      return true;
    }
    for (let delay = this.deps.restartDelayMs; ; delay = Math.min(delay * 2, sandboxRetryCapMs)) {
      if (this.#stopping !== undefined) return false;
      try {
        const sandbox = await this.deps.network.create(this.#pod.metadata?.uid ?? '');
        this.#netnsPath = sandbox.netnsPath;
        this.#sandbox = { podIPs: sandbox.podIPs };
        this.#syncStatus();
        return true;
      } catch (err) {
        const message = `Failed to create pod sandbox: ${(err as Error).message}`;
        this.#log.warn({ err }, 'pod sandbox failed');
        this.#sandbox = { podIPs: [], error: message };
        void this.#event('Warning', 'FailedCreatePodSandBox', message);
        this.#syncStatus();
      }
      if (!(await this.#sleep(delay))) return false;
    }
  }

  /** Waits `ms` unless the pod starts stopping meanwhile (then false). */
  async #sleep(ms: number): Promise<boolean> {
    await new Promise<void>((resolve) => {
      const wake = (): void => {
        clearTimeout(timer);
        this.#timers.delete(timer);
        this.#wakers.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.#timers.add(timer);
      this.#wakers.add(wake);
    });
    return this.#stopping === undefined;
  }

  /**
   * Runs one init container to completion, restarting it after a failure unless the pod's
   * restartPolicy is Never (then the pod has failed). True when the next one may start.
   */
  async #runInitContainer(spec: V1Container): Promise<boolean> {
    const record = this.initRecords.get(spec.name);
    for (;;) {
      if (record === undefined || this.#stopping !== undefined) return false;
      const code = await (await this.#startContainer(spec, record))?.code;
      if (code === 0) return true;
      if (code === undefined || this.#stopping !== undefined || this.#pod.spec?.restartPolicy === 'Never') return false;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          this.#timers.delete(timer);
          resolve();
        }, this.deps.restartDelayMs);
        this.#timers.add(timer);
      });
      record.restartCount += 1;
    }
  }

  /** Starts a container; resolves with a promise of its exit code once it runs (undefined when it cannot). */
  async #startContainer(spec: V1Container, record = this.records.get(spec.name)): Promise<{ code: Promise<number> } | undefined> {
    if (record === undefined || this.#stopping !== undefined) return undefined;
    const image = await this.#pullImage(spec, record);
    if (image === undefined) return undefined;
    try {
      await mkdir(dirname(this.paths.log(spec.name)), { recursive: true });
      const allocated = this.deps.devices && await containerDevices(this.deps.devices.registry, this.deps.devices.hostRoot, this.#pod.metadata?.uid ?? '', spec);
      const claimed = await volumeDeviceNodes(spec, this.#sources);
      const devices = allocated === undefined && claimed.length === 0 ? undefined : [...(allocated ?? []), ...claimed];
      const logs = new ContainerLogWriter(this.paths.log(spec.name));
      const container = await this.deps.runtime.start({
        ...(devices === undefined ? {} : { devices }),
        command: containerArgv(image, spec.command, spec.args),
        stateDir: this.paths.containerState(spec.name),
        binds: containerBinds(this.#pod, spec, this.paths, this.#sources),
        env: containerEnv(this.#pod, spec, this.deps.hostIP, image.env, this.#sandbox.podIPs[0]),
        ...(this.#netnsPath === undefined ? {} : { netnsPath: this.#netnsPath }),
        ...(spec.workingDir === undefined ? {} : { cwd: spec.workingDir }),
        ...this.#memoryLimit(spec, record),
        pod: this.#pod, container: spec, logPath: this.paths.log(spec.name), image, runId: `${this.#pod.metadata?.uid ?? 'pod'}-${spec.name}-${record.restartCount}`,
        ...(this.#sandbox.podIPs[0] === undefined ? {} : { podIP: this.#sandbox.podIPs[0] }),
      });
      const drained = Promise.all([logs.attach(container.stdout, 'stdout'), logs.attach(container.stderr, 'stderr')]).then(() => logs.close());
      this.#running.set(spec.name, { container, logs, drained });
      const startedAt = new Date();
      record.current = { state: 'running', startedAt };
      record.containerID = container.id === undefined ? `testbed://${container.pid}` : `podman://${container.id}`;
      void this.#event('Normal', 'Started', `Started container ${spec.name}`);
      this.#syncStatus();
      const code = container.exited.then(async (exit) => {
        await drained;
        const exitCode = exit.code ?? 128 + signalNumber(exit.signal);
        // As the kubelet reports it: an OOM kill in the container's cgroup names the termination.
        const reason = exit.oomKilled === true ? 'OOMKilled' : exitCode === 0 ? 'Completed' : 'Error';
        record.current = { state: 'terminated', exitCode, reason, startedAt, finishedAt: new Date() };
        if (exit.signal !== null) record.current.signal = signalNumber(exit.signal);
        this.#running.delete(spec.name);
        this.#syncStatus();
        if (record.init !== true) {
          this.#maybeRestart(spec, exitCode);
          this.#stopSidecarsIfDone();
        }
        return exitCode;
      });
      return { code };
    } catch (err) {
      this.#log.warn({ err, container: spec.name }, 'container start failed');
      const code = (err as { code?: string }).code;
      if (code === 'PODVIRT_CONTAINER_EXEC_FAILED') return this.#startError(spec, record, (err as Error).message);
      const reason = code === 'PODVIRT_KUBELET_SECURITY_CONTEXT' ? 'CreateContainerConfigError' : 'CreateContainerError';
      record.current = { state: 'waiting', reason, message: (err as Error).message };
      void this.#event('Warning', 'Failed', `Error: ${(err as Error).message}`);
      this.#syncStatus();
      return undefined;
    }
  }

  /**
   * The runtime made the container but could not start its process (its entrypoint is not in
   * the image): terminated with exit code 128 and reason StartError, as a real kubelet reports
   * it; the pod's restartPolicy decides what follows, as for any exit.
   */
  #startError(spec: V1Container, record: ContainerRecord, message: string): { code: Promise<number> } {
    const now = new Date();
    record.current = { state: 'terminated', exitCode: 128, reason: 'StartError', message, startedAt: now, finishedAt: now };
    void this.#event('Warning', 'Failed', `Error: ${message}`);
    this.#syncStatus();
    if (record.init !== true) {
      this.#maybeRestart(spec, 128);
      this.#stopSidecarsIfDone();
    }
    return { code: Promise.resolve(128) };
  }

  /** The container's resources.limits.memory as a cgroup to run it in; one group per run. */
  #memoryLimit(spec: V1Container, record: { restartCount: number }): { memory: { cgroupName: string; limitBytes: number } } | Record<string, never> {
    const limit = spec.resources?.limits?.['memory'];
    if (limit === undefined) return {};
    const limitBytes = Number(toBytes(parseQuantity(String(limit))));
    const cgroupName = `${this.#pod.metadata?.uid ?? 'pod'}-${spec.name}-${record.restartCount}`;
    return { memory: { cgroupName, limitBytes } };
  }

  /**
   * "Pulls" the container's image: found in the image map, or the kubelet's pull failure as a
   * real one reports it — ErrImagePull with the image named, then ImagePullBackOff while it
   * waits (doubling up to 5 minutes) before trying again, with the Pulling/Failed/BackOff
   * Events. Undefined once the pod is stopping.
   */
  async #pullImage(spec: V1Container, record: ContainerRecord): Promise<ImageCommand | undefined> {
    const name = spec.image ?? '';
    for (let delay = this.deps.restartDelayMs; ; delay = Math.min(delay * 2, imagePullBackoffCapMs)) {
      const found = await this.#lookUpImage(name);
      if ('image' in found) return found.image;
      void this.#event('Normal', 'Pulling', `Pulling image "${name}"`);
      const why = `failed to pull and unpack image "${name}": ${found.missing}`;
      record.current = { state: 'waiting', reason: 'ErrImagePull', message: why };
      void this.#event('Warning', 'Failed', `Failed to pull image "${name}": ${why}`);
      void this.#event('Warning', 'Failed', 'Error: ErrImagePull');
      this.#syncStatus();
      if (!(await this.#sleep(this.deps.restartDelayMs))) return undefined;
      record.current = { state: 'waiting', reason: 'ImagePullBackOff', message: `Back-off pulling image "${name}"` };
      void this.#event('Normal', 'BackOff', `Back-off pulling image "${name}"`);
      void this.#event('Warning', 'Failed', 'Error: ImagePullBackOff');
      this.#syncStatus();
      if (!(await this.#sleep(delay))) return undefined;
    }
  }

  /** The runtime's own image store when it has one, else the testbed's image map. */
  async #lookUpImage(name: string): Promise<ImageLookup> {
    if (this.deps.runtime.resolveImage !== undefined) return this.deps.runtime.resolveImage(name);
    const image = this.deps.imageMap(name);
    return image === undefined ? { missing: `failed to resolve reference "${name}": not found in the testbed's image map` } : { image };
  }

  #maybeRestart(spec: V1Container, code: number): void {
    const policy = this.#pod.spec?.restartPolicy ?? 'Always';
    if (this.#stopping !== undefined || policy === 'Never' || (policy === 'OnFailure' && code === 0)) return;
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      const record = this.records.get(spec.name);
      if (record !== undefined) record.restartCount += 1;
      void this.#startContainer(spec);
    }, this.deps.restartDelayMs);
    this.#timers.add(timer);
  }

  #syncStatus(): void {
    this.#statusChain = this.#statusChain.then(() => this.#writeStatus()).catch((err: unknown) => this.#log.debug({ err }, 'status update failed'));
  }

  async #flushStatus(): Promise<void> {
    this.#syncStatus();
    await this.#statusChain;
  }

  async #writeStatus(): Promise<void> {
    const pod = this.#pod;
    const status = computePodStatus(pod, [...this.records.values()], this.deps.hostIP, this.#startTime, new Date(), [...this.initRecords.values()], this.#sandbox);
    const updated = await this.deps.core.patchNamespacedPodStatus(
      { namespace: pod.metadata?.namespace ?? 'default', name: pod.metadata?.name ?? '', body: podStatusPatch(status) },
      setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
    );
    if (updated.metadata?.deletionTimestamp === undefined || this.#pod.metadata?.deletionTimestamp !== undefined) this.#pod = updated;
  }

  async #confirmDeletion(): Promise<void> {
    const pod = this.#pod;
    try {
      await this.deps.core.deleteNamespacedPod({
        namespace: pod.metadata?.namespace ?? 'default',
        name: pod.metadata?.name ?? '',
        gracePeriodSeconds: 0,
        body: { gracePeriodSeconds: 0, preconditions: { uid: pod.metadata?.uid ?? '' } },
      });
    } catch (err) {
      this.#log.debug({ err }, 'final delete failed (already gone?)');
    }
  }

  async #event(type: 'Normal' | 'Warning', reason: string, message: string): Promise<void> {
    const pod = this.#pod;
    const regarding = { kind: 'Pod', apiVersion: 'v1', namespace: pod.metadata?.namespace ?? 'default', name: pod.metadata?.name ?? '', uid: pod.metadata?.uid ?? '' };
    await this.deps.events.record({ regarding, type, reason, message }).catch((err: unknown) => this.#log.debug({ err }, 'event failed'));
  }
}

function signalNumber(signal: NodeJS.Signals | null): number {
  const numbers: Record<string, number> = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGKILL: 9, SIGTERM: 15 };
  return signal === null ? 0 : (numbers[signal] ?? 0);
}
