// The controller's view of the cluster: an informer for VMIs, one for launcher pods
// (label `kubevirt.io=virt-launcher`) and one for PVCs, served as VmiStore, PodStore and ClaimStore. client-node's ListWatch
// relists on 410 Gone by itself but stops for good on any other error, so a stopped informer
// is restarted after a pause; a periodic resync re-delivers every VMI, which repairs whatever a
// lost event or a failed write left behind.

import {
  CoreV1Api,
  CustomObjectsApi,
  ListWatch,
  Watch,
  type KubeConfig,
  type KubernetesListObject,
  type KubernetesObject,
  type V1PersistentVolumeClaim,
  type V1Pod,
} from '@kubernetes/client-node';
import { APP_LABEL, LAUNCHER_APP_LABEL_VALUE, VMI_GROUP, VMI_PLURAL, VMI_VERSION, type VirtualMachineInstance } from '@podvirt/api';
import type { Logger } from 'pino';
import { abortableDelay } from './abortable-delay.js';
import type { ClaimStore } from './claim-check.js';
import type { PodStore, VmiStore } from './cluster-roles.js';

export type PodChange = 'add' | 'update' | 'delete';

export interface ClusterInformersOptions {
  readonly kubeConfig: KubeConfig;
  readonly log: Logger;
  /** Watch one namespace only; all namespaces when unset. */
  readonly namespace?: string | undefined;
  readonly onVmi: (vmi: VirtualMachineInstance) => void;
  readonly onPod: (pod: V1Pod, change: PodChange) => void;
  /** A PVC appeared, changed (e.g. became Bound) or went away. */
  readonly onClaim?: (claim: V1PersistentVolumeClaim) => void;
  /** Every VMI is re-delivered this often; client-go controllers use minutes. */
  readonly resyncMs?: number;
  /** Pause before a failed informer lists and watches again. */
  readonly restartDelayMs?: number;
}

export const LAUNCHER_POD_SELECTOR = `${APP_LABEL}=${LAUNCHER_APP_LABEL_VALUE}`;
export const DEFAULT_RESYNC_MS = 5 * 60_000;
export const DEFAULT_RESTART_DELAY_MS = 2_000;

export class ClusterInformers implements VmiStore, PodStore, ClaimStore {
  readonly #o: ClusterInformersOptions;
  readonly #vmis: ListWatch<KubernetesObject>;
  readonly #pods: ListWatch<V1Pod>;
  readonly #claims: ListWatch<V1PersistentVolumeClaim>;
  readonly #timers = new Set<NodeJS.Timeout>();
  readonly #closing = new AbortController();

  constructor(options: ClusterInformersOptions) {
    this.#o = options;
    const { kubeConfig, namespace } = options;
    const custom = kubeConfig.makeApiClient(CustomObjectsApi);
    const core = kubeConfig.makeApiClient(CoreV1Api);
    const watch = new Watch(kubeConfig);
    const vmiPath = namespace
      ? `/apis/${VMI_GROUP}/${VMI_VERSION}/namespaces/${namespace}/${VMI_PLURAL}`
      : `/apis/${VMI_GROUP}/${VMI_VERSION}/${VMI_PLURAL}`;
    const listVmis = async (): Promise<KubernetesListObject<KubernetesObject>> => {
      const base = { group: VMI_GROUP, version: VMI_VERSION };
      const list: unknown = namespace
        ? await custom.listNamespacedCustomObject({ ...base, namespace, plural: VMI_PLURAL })
        : await custom.listCustomObjectForAllNamespaces({ ...base, plural: VMI_PLURAL });
      return list as KubernetesListObject<KubernetesObject>;
    };
    const podPath = namespace ? `/api/v1/namespaces/${namespace}/pods` : '/api/v1/pods';
    const listPods = (): Promise<KubernetesListObject<V1Pod>> =>
      namespace
        ? core.listNamespacedPod({ namespace, labelSelector: LAUNCHER_POD_SELECTOR })
        : core.listPodForAllNamespaces({ labelSelector: LAUNCHER_POD_SELECTOR });
    this.#vmis = new ListWatch(vmiPath, watch, listVmis, false);
    this.#pods = new ListWatch(podPath, watch, listPods, false, LAUNCHER_POD_SELECTOR);
    const claimPath = namespace ? `/api/v1/namespaces/${namespace}/persistentvolumeclaims` : '/api/v1/persistentvolumeclaims';
    const listClaims = (): Promise<KubernetesListObject<V1PersistentVolumeClaim>> =>
      namespace ? core.listNamespacedPersistentVolumeClaim({ namespace }) : core.listPersistentVolumeClaimForAllNamespaces();
    this.#claims = new ListWatch(claimPath, watch, listClaims, false);
    for (const change of ['add', 'update', 'delete'] as const) this.#claims.on(change, (claim) => options.onClaim?.(claim));
    const onVmi = (obj: KubernetesObject): void => options.onVmi(obj as unknown as VirtualMachineInstance);
    this.#vmis.on('change', onVmi);
    this.#pods.on('add', (pod) => options.onPod(pod, 'add'));
    this.#pods.on('update', (pod) => options.onPod(pod, 'update'));
    this.#pods.on('delete', (pod) => options.onPod(pod, 'delete'));
  }

  get(namespace: string, name: string): VirtualMachineInstance | undefined {
    return this.#vmis.get(name, namespace) as VirtualMachineInstance | undefined;
  }

  list(): VirtualMachineInstance[] {
    return this.#vmis.list() as unknown as VirtualMachineInstance[];
  }

  ownedBy(namespace: string, vmiUid: string): V1Pod[] {
    return this.#pods.list(namespace).filter((pod) => pod.metadata?.ownerReferences?.some((ref) => ref.controller === true && ref.uid === vmiUid));
  }

  getClaim(namespace: string, name: string): V1PersistentVolumeClaim | undefined {
    return this.#claims.get(name, namespace);
  }

  podsUsingClaim(namespace: string, claimName: string): V1Pod[] {
    return this.#pods.list(namespace).filter((pod) => pod.spec?.volumes?.some((v) => v.persistentVolumeClaim?.claimName === claimName) === true);
  }

  /** Lists every kind (retrying until it works or `signal` aborts), then keeps watching. */
  async start(signal: AbortSignal): Promise<void> {
    await Promise.all([
      this.#startOne('vmis', this.#vmis, signal),
      this.#startOne('pods', this.#pods, signal),
      this.#startOne('persistentvolumeclaims', this.#claims, signal),
    ]);
    const resync = setInterval(() => {
      for (const vmi of this.list()) this.#o.onVmi(vmi);
    }, this.#o.resyncMs ?? DEFAULT_RESYNC_MS);
    resync.unref();
    this.#timers.add(resync);
  }

  async #startOne(kind: string, informer: ListWatch<KubernetesObject> | ListWatch<V1Pod> | ListWatch<V1PersistentVolumeClaim>, signal: AbortSignal): Promise<void> {
    const delayMs = this.#o.restartDelayMs ?? DEFAULT_RESTART_DELAY_MS;
    const log = this.#o.log.child({ informer: kind });
    informer.on('error', (err: unknown) => {
      if (this.#closing.signal.aborted) return;
      log.warn({ err }, 'informer stopped, restarting');
      this.#later(() => void informer.start(), delayMs);
    });
    // ListWatch reports a failed first list through the error callback, which restarts it;
    // listed means it has a resourceVersion.
    await informer.start();
    const stop = AbortSignal.any([signal, this.#closing.signal]);
    while (informer.latestResourceVersion() === '' && !stop.aborted) await abortableDelay(delayMs, stop);
  }

  #later(fn: () => void, ms: number): void {
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      if (!this.#closing.signal.aborted) fn();
    }, ms);
    timer.unref();
    this.#timers.add(timer);
  }

  /** Stops both watches and every timer. Idempotent. */
  async close(): Promise<void> {
    if (this.#closing.signal.aborted) return;
    this.#closing.abort();
    for (const timer of this.#timers) {
      clearTimeout(timer);
      clearInterval(timer);
    }
    this.#timers.clear();
    await Promise.all([this.#vmis.stop(), this.#pods.stop(), this.#claims.stop()]);
  }
}
