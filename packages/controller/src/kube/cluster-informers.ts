// The controller's view of the cluster: kube-runtime informers for VMIs, for launcher pods
// and hotplug attachment pods (label `kubevirt.io` virt-launcher or hotplug-disk), for PVCs, for the kubelet's FailedMount Events about
// pods and for VMI migrations, served as VmiStore, PodStore, ClaimStore, MountEventStore and
// MigrationStore.
// The informers relist on 410 and retry with backoff by themselves; the VMI informer re-delivers
// every VMI each resync period, which repairs whatever a lost event or a failed write left behind.

import type { CoreV1Event, V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import { APP_LABEL, HOTPLUG_DISK_APP_LABEL_VALUE, LAUNCHER_APP_LABEL_VALUE, MIGRATION_RESOURCE, VMI_RESOURCE, type VirtualMachineInstance, type VirtualMachineInstanceMigration } from '@podvirt/api';
import { EVENTS, Informer, PERSISTENT_VOLUME_CLAIMS, PODS, ResourceClient, type InformerEventType, type KubeClient } from '@podvirt/kube-runtime';
import type { Logger } from 'pino';
import type { ClaimStore } from '../decide/claim-check.js';
import type { MigrationStore, MountEventStore, PodStore, VmiStore } from './cluster-roles.js';

export type PodChange = 'add' | 'update' | 'delete';

export interface ClusterInformersOptions {
  readonly client: KubeClient;
  readonly log: Logger;
  /** Watch one namespace only; all namespaces when unset. */
  readonly namespace?: string | undefined;
  readonly onVmi: (vmi: VirtualMachineInstance, type: InformerEventType) => void;
  readonly onPod: (pod: V1Pod, change: PodChange) => void;
  /** A VirtualMachineInstanceMigration appeared, changed or went away. */
  readonly onMigration?: (vmim: VirtualMachineInstanceMigration) => void;
  /** A PVC appeared, changed (e.g. became Bound) or went away. */
  readonly onClaim?: (claim: V1PersistentVolumeClaim) => void;
  /** The kubelet could not mount a volume of this launcher pod (a FailedMount Event). */
  readonly onMountFailure?: (pod: V1Pod) => void;
  /** Every VMI is re-delivered this often; client-go controllers use minutes. */
  readonly resyncMs?: number;
  /** First pause before a failed list or watch is retried (it doubles). */
  readonly restartDelayMs?: number;
}

export const LAUNCHER_POD_SELECTOR = `${APP_LABEL} in (${LAUNCHER_APP_LABEL_VALUE},${HOTPLUG_DISK_APP_LABEL_VALUE})`;
export const MOUNT_EVENT_SELECTOR = 'involvedObject.kind=Pod,reason=FailedMount';
export const DEFAULT_RESYNC_MS = 5 * 60_000;
export const DEFAULT_RESTART_DELAY_MS = 2_000;

const CHANGE = { ADDED: 'add', MODIFIED: 'update', DELETED: 'delete' } as const;

export class ClusterInformers implements VmiStore, PodStore, ClaimStore, MountEventStore, MigrationStore {
  readonly #vmis: Informer<VirtualMachineInstance>;
  readonly #pods: Informer<V1Pod>;
  readonly #claims: Informer<V1PersistentVolumeClaim>;
  readonly #mountEvents: Informer<CoreV1Event>;
  readonly #migrations: Informer<VirtualMachineInstanceMigration>;

  constructor(options: ClusterInformersOptions) {
    const { client, namespace, log } = options;
    const resyncPeriodMs = options.resyncMs ?? DEFAULT_RESYNC_MS;
    const retryMs = options.restartDelayMs ?? DEFAULT_RESTART_DELAY_MS;
    this.#vmis = new Informer<VirtualMachineInstance>({
      source: new ResourceClient<VirtualMachineInstance>(client, VMI_RESOURCE).listWatch(namespace),
      // Deletions too: the sync of a VMI that is gone forgets its expectations.
      onEvent: (type, vmi) => options.onVmi(vmi, type),
      log: log.child({ informer: 'vmis' }),
      resyncPeriodMs,
      retryMs,
    });
    // Pods and claims are not resynced on their own: the VMI resync reconciles every owner anyway.
    this.#pods = new Informer<V1Pod>({
      source: new ResourceClient<V1Pod>(client, PODS).listWatch(namespace, { labelSelector: LAUNCHER_POD_SELECTOR }),
      onEvent: (type, pod) => {
        if (type !== 'RESYNC') options.onPod(pod, CHANGE[type]);
      },
      log: log.child({ informer: 'pods' }),
      resyncPeriodMs,
      retryMs,
    });
    this.#claims = new Informer<V1PersistentVolumeClaim>({
      source: new ResourceClient<V1PersistentVolumeClaim>(client, PERSISTENT_VOLUME_CLAIMS).listWatch(namespace),
      onEvent: (type, claim) => {
        if (type !== 'RESYNC') options.onClaim?.(claim);
      },
      log: log.child({ informer: 'persistentvolumeclaims' }),
      resyncPeriodMs,
      retryMs,
    });
    this.#migrations = new Informer<VirtualMachineInstanceMigration>({
      source: new ResourceClient<VirtualMachineInstanceMigration>(client, MIGRATION_RESOURCE).listWatch(namespace),
      onEvent: (_type, vmim) => options.onMigration?.(vmim),
      log: log.child({ informer: 'migrations' }),
      resyncPeriodMs,
      retryMs,
    });
    this.#mountEvents = new Informer<CoreV1Event>({
      source: new ResourceClient<CoreV1Event>(client, EVENTS).listWatch(namespace, { fieldSelector: MOUNT_EVENT_SELECTOR }),
      onEvent: (type, event) => {
        const pod = this.#pods.get(`${event.involvedObject.namespace ?? ''}/${event.involvedObject.name ?? ''}`);
        if (type !== 'RESYNC' && type !== 'DELETED' && pod !== undefined) options.onMountFailure?.(pod);
      },
      log: log.child({ informer: 'mount-events' }),
      resyncPeriodMs,
      retryMs,
    });
  }

  get(namespace: string, name: string): VirtualMachineInstance | undefined {
    return this.#vmis.get(`${namespace}/${name}`);
  }

  list(): VirtualMachineInstance[] {
    return this.#vmis.list();
  }

  ownedBy(namespace: string, vmiUid: string): V1Pod[] {
    return this.#controlledBy(namespace, vmiUid).filter((pod) => pod.metadata?.labels?.[APP_LABEL] !== HOTPLUG_DISK_APP_LABEL_VALUE);
  }

  attachmentPods(namespace: string, vmiUid: string): V1Pod[] {
    return this.#controlledBy(namespace, vmiUid).filter((pod) => pod.metadata?.labels?.[APP_LABEL] === HOTPLUG_DISK_APP_LABEL_VALUE);
  }

  #controlledBy(namespace: string, vmiUid: string): V1Pod[] {
    return this.#podsIn(namespace).filter((pod) => pod.metadata?.ownerReferences?.some((ref) => ref.controller === true && ref.uid === vmiUid));
  }

  getClaim(namespace: string, name: string): V1PersistentVolumeClaim | undefined {
    return this.#claims.get(`${namespace}/${name}`);
  }

  podsUsingClaim(namespace: string, claimName: string): V1Pod[] {
    return this.#podsIn(namespace).filter((pod) => pod.spec?.volumes?.some((v) => v.persistentVolumeClaim?.claimName === claimName) === true);
  }

  getMigration(namespace: string, name: string): VirtualMachineInstanceMigration | undefined {
    return this.#migrations.get(`${namespace}/${name}`);
  }

  listMigrations(): VirtualMachineInstanceMigration[] {
    return this.#migrations.list();
  }

  mountEvents(namespace: string, podUid: string): CoreV1Event[] {
    return this.#mountEvents.list().filter((e) => e.involvedObject.namespace === namespace && e.involvedObject.uid === podUid);
  }

  /** Lists every kind (retrying until it works or `signal` aborts), then keeps watching. */
  async start(signal: AbortSignal): Promise<void> {
    const all = [this.#vmis, this.#pods, this.#claims, this.#mountEvents, this.#migrations];
    for (const informer of all) informer.start();
    await Promise.all(all.map((informer) => informer.waitForSync(signal)));
  }

  /** Stops every watch and timer. Idempotent. */
  async close(): Promise<void> {
    await Promise.all([this.#vmis.close(), this.#pods.close(), this.#claims.close(), this.#mountEvents.close(), this.#migrations.close()]);
  }

  #podsIn(namespace: string): V1Pod[] {
    return this.#pods.list().filter((pod) => pod.metadata?.namespace === namespace);
  }
}
