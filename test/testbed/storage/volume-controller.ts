// The testbed's PersistentVolume controller, with kube-controller-manager's semantics for what
// podvirt uses: a Pending claim binds to the smallest Available PV that has its storage class,
// volumeMode and access modes and at least its size (or the PV it names in spec.volumeName);
// with none, a claim of the provisioner's class gets a new PV. A PV whose claim is gone is
// Released, then deleted (and its storage freed) under reclaim policy Delete, kept under Retain.
// A claim that names no class gets the default class's name, as kube-controller-manager's
// retroactive default-class assignment does.
//
// On the real control plane (`role: 'provisioner'`) kube-controller-manager binds and releases;
// this only does an external provisioner's part: a claim kube-controller-manager has annotated
// for LOCAL_PROVISIONER gets a PV pre-bound to it (kube-controller-manager completes the bind),
// and a Released PV this provisioner made is freed and deleted under reclaim policy Delete.

import { CoreV1Api, ListWatch, StorageV1Api, Watch, type KubeConfig, type V1PersistentVolume, type V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { parseQuantityValue, toBytes } from '@podvirt/api';
import type { Logger } from 'pino';
import { EventRecorder } from '../scheduler/event-recorder.js';
import { LOCAL_PROVISIONER, LocalProvisioner } from './local-provisioner.js';

export interface VolumeControllerOptions {
  readonly kubeConfig: KubeConfig;
  readonly logger: Logger;
  /** Where the provisioner makes directories and loop-device backing files. */
  readonly provisionDir: string;
  /** `controller` (default): the whole PV controller. `provisioner`: only provisioning and deleting (kube-controller-manager binds). */
  readonly role?: 'controller' | 'provisioner';
  /**
   * The nodes a block volume's loop device serves (every testbed node shares the machine's
   * devices): a `local` PV must carry node affinity, which kube-apiserver requires and
   * kube-scheduler honours.
   */
  readonly nodeNames: readonly string[];
}

/** The StorageClass every testbed has, as kind and minikube have one: the local provisioner's, the default. */
export const DEFAULT_STORAGE_CLASS = {
  apiVersion: 'storage.k8s.io/v1',
  kind: 'StorageClass',
  metadata: { name: 'standard', annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } },
  provisioner: LOCAL_PROVISIONER,
  reclaimPolicy: 'Delete',
  volumeBindingMode: 'Immediate',
};

/** What kube-controller-manager writes on a claim it leaves to an external provisioner. */
const ANN_STORAGE_PROVISIONER = 'volume.kubernetes.io/storage-provisioner';
const ANN_BETA_STORAGE_PROVISIONER = 'volume.beta.kubernetes.io/storage-provisioner';
const ANN_PROVISIONED_BY = 'pv.kubernetes.io/provisioned-by';
const ANN_DEFAULT_CLASS = 'storageclass.kubernetes.io/is-default-class';

function bytes(q: unknown): bigint {
  try {
    return toBytes(parseQuantityValue(q as string));
  } catch {
    return 0n;
  }
}

function key(claim: V1PersistentVolumeClaim): string {
  return `${claim.metadata?.namespace ?? ''}/${claim.metadata?.name ?? ''}`;
}

/** Why `pv` cannot hold `claim`, or undefined when it can: kube-controller-manager's checks, in its order and words. */
export function mismatch(pv: V1PersistentVolume, claim: V1PersistentVolumeClaim): string | undefined {
  const want = claim.spec ?? {};
  if (pv.metadata?.deletionTimestamp !== undefined) return `the volume is marked for deletion ${JSON.stringify(pv.metadata.name ?? '')}`;
  if (bytes(pv.spec?.capacity?.['storage']) < bytes(want.resources?.requests?.['storage'])) return 'requested PV is too small';
  if ((pv.spec?.storageClassName ?? '') !== (want.storageClassName ?? '')) return 'storageClassName does not match';
  if ((pv.spec?.volumeMode ?? 'Filesystem') !== (want.volumeMode ?? 'Filesystem')) return 'incompatible volumeMode';
  const modes = pv.spec?.accessModes ?? [];
  if ((want.accessModes ?? []).some((m) => !modes.includes(m))) return 'incompatible accessMode';
  return undefined;
}

export class VolumeController {
  readonly #core: CoreV1Api;
  readonly #storage: StorageV1Api;
  readonly #log: Logger;
  readonly #events: EventRecorder;
  readonly #pvs: ListWatch<V1PersistentVolume>;
  readonly #claims: ListWatch<V1PersistentVolumeClaim>;
  readonly #provisioner: LocalProvisioner;
  readonly #role: 'controller' | 'provisioner';
  readonly #nodeNames: readonly string[];
  readonly #reported = new Map<string, string>();
  #running: Promise<void> = Promise.resolve();
  #retry: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(options: VolumeControllerOptions) {
    this.#core = options.kubeConfig.makeApiClient(CoreV1Api);
    this.#storage = options.kubeConfig.makeApiClient(StorageV1Api);
    this.#log = options.logger.child({ component: 'persistentvolume-controller' });
    this.#events = new EventRecorder(this.#core, 'persistentvolume-controller', 'testbed');
    this.#provisioner = new LocalProvisioner(options.provisionDir);
    this.#role = options.role ?? 'controller';
    this.#nodeNames = options.nodeNames;
    const watch = new Watch(options.kubeConfig);
    this.#pvs = new ListWatch('/api/v1/persistentvolumes', watch, () => this.#core.listPersistentVolume(), false);
    this.#claims = new ListWatch('/api/v1/persistentvolumeclaims', watch, () => this.#core.listPersistentVolumeClaimForAllNamespaces(), false);
    for (const change of ['add', 'update', 'delete'] as const) {
      this.#pvs.on(change, () => this.#kick());
      this.#claims.on(change, () => this.#kick());
    }
    const onError = (err: unknown): void => {
      if (!this.#closed) this.#log.warn({ err }, 'watch failed');
    };
    this.#pvs.on('error', onError);
    this.#claims.on('error', onError);
  }

  async start(): Promise<void> {
    await Promise.all([this.#pvs.start(), this.#claims.start()]);
    this.#kick();
  }

  /** Stops watching, then frees every directory and loop device the provisioner still holds. */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#retry);
    await Promise.all([this.#pvs.stop(), this.#claims.stop()]);
    await this.#running;
    await this.#provisioner.close();
  }

  #kick(): void {
    if (this.#closed) return;
    this.#running = this.#running.then(() => this.#pass()).catch((err: unknown) => this.#log.warn({ err }, 'volume pass failed'));
  }

  async #pass(): Promise<void> {
    const claims = this.#claims.list();
    let retry = false;
    // One object's failure (a conflict with a cache that is behind) must not stop the others.
    const each = async (what: string, fn: () => Promise<void>): Promise<void> => {
      try {
        await fn();
      } catch (err) {
        retry = true;
        this.#log.debug({ err, what }, 'volume sync failed, retrying');
      }
    };
    const provisioner = this.#role === 'provisioner';
    for (const pv of this.#pvs.list()) {
      if (this.#closed) return;
      await each(pv.metadata?.name ?? '', () => (provisioner ? this.#deleteReleased(pv) : this.#syncVolume(pv, claims)));
    }
    for (const claim of claims) {
      if (this.#closed) return;
      if (claim.status?.phase === 'Pending' || claim.status?.phase === undefined) await each(key(claim), () => (provisioner ? this.#provisionAnnotated(claim) : this.#syncClaim(claim)));
    }
    if (retry && !this.#closed) {
      clearTimeout(this.#retry);
      this.#retry = setTimeout(() => this.#kick(), 500);
    }
  }

  async #syncVolume(pv: V1PersistentVolume, claims: readonly V1PersistentVolumeClaim[]): Promise<void> {
    const name = pv.metadata?.name ?? '';
    const ref = pv.spec?.claimRef;
    const phase = pv.status?.phase;
    if (ref === undefined) {
      if (phase !== 'Available') await this.#core.replacePersistentVolumeStatus({ name, body: { ...pv, status: { phase: 'Available' } } });
      return;
    }
    const claim = claims.find((c) => c.metadata?.namespace === ref.namespace && c.metadata?.name === ref.name);
    const gone = claim === undefined || (ref.uid !== undefined && claim.metadata?.uid !== ref.uid);
    if (!gone || phase === 'Failed') return;
    if (phase !== 'Released') {
      await this.#core.replacePersistentVolumeStatus({ name, body: { ...pv, status: { phase: 'Released' } } });
      return;
    }
    await this.#reclaim(pv);
  }

  /** A Released PV under reclaim policy Delete: its storage freed (when the provisioner made it), then the object deleted. */
  async #reclaim(pv: V1PersistentVolume): Promise<void> {
    if (pv.spec?.persistentVolumeReclaimPolicy !== 'Delete') return;
    const name = pv.metadata?.name ?? '';
    const path = pv.spec.hostPath?.path ?? pv.spec.local?.path ?? '';
    if (this.#provisioner.owns(path)) await this.#provisioner.release(path);
    await this.#core.deletePersistentVolume({ name }).catch(() => undefined);
    this.#log.info({ pv: name }, 'reclaimed volume (Delete)');
  }

  /** The external deleter's part: kube-controller-manager marked the PV Released and leaves a PV provisioned by another to it. */
  async #deleteReleased(pv: V1PersistentVolume): Promise<void> {
    if (pv.status?.phase !== 'Released' || pv.metadata?.annotations?.[ANN_PROVISIONED_BY] !== LOCAL_PROVISIONER) return;
    await this.#reclaim(pv);
  }

  /** The external provisioner's part: a claim kube-controller-manager left to LOCAL_PROVISIONER. */
  async #provisionAnnotated(claim: V1PersistentVolumeClaim): Promise<void> {
    const annotations = claim.metadata?.annotations ?? {};
    const wanted = annotations[ANN_STORAGE_PROVISIONER] ?? annotations[ANN_BETA_STORAGE_PROVISIONER];
    if (wanted !== LOCAL_PROVISIONER || claim.spec?.volumeName) return;
    if (this.#pvs.list().some((pv) => pv.spec?.claimRef?.uid === claim.metadata?.uid)) return;
    const className = claim.spec?.storageClassName ?? '';
    const sc = await this.#storage.readStorageClass({ name: className });
    await this.#provision(claim, sc.reclaimPolicy ?? 'Delete');
  }

  /** kube-controller-manager's retroactive default class: a claim that names none gets the default's name. */
  async #assignDefaultClass(claim: V1PersistentVolumeClaim): Promise<V1PersistentVolumeClaim> {
    if (claim.spec?.storageClassName !== undefined) return claim;
    const classes = (await this.#storage.listStorageClass()).items.filter((c) => c.metadata?.annotations?.[ANN_DEFAULT_CLASS] === 'true');
    // More than one default: the newest, as kube-apiserver's DefaultStorageClass admission picks.
    classes.sort((a, b) => (a.metadata?.creationTimestamp?.getTime() ?? 0) - (b.metadata?.creationTimestamp?.getTime() ?? 0));
    const chosen = classes.at(-1)?.metadata?.name;
    if (chosen === undefined) return claim;
    const namespace = claim.metadata?.namespace ?? '';
    const name = claim.metadata?.name ?? '';
    return this.#core.replaceNamespacedPersistentVolumeClaim({ namespace, name, body: { ...claim, spec: { ...claim.spec, storageClassName: chosen } } });
  }

  async #syncClaim(pending: V1PersistentVolumeClaim): Promise<void> {
    const claim = await this.#assignDefaultClass(pending);
    // A PV made for this claim (by the provisioner, or pre-bound by its author) is its volume.
    const preBound = this.#pvs.list().find((pv) => pv.spec?.claimRef?.uid === claim.metadata?.uid && claim.metadata?.uid !== undefined);
    if (preBound !== undefined) return this.#bind(preBound, claim);
    const wanted = claim.spec?.volumeName;
    const available = this.#pvs.list().filter((pv) => pv.status?.phase === 'Available' && pv.spec?.claimRef === undefined);
    if (wanted) {
      const pv = this.#pvs.list().find((p) => p.metadata?.name === wanted);
      const why = pv === undefined ? 'it does not exist' : pv.spec?.claimRef !== undefined && pv.spec.claimRef.uid !== claim.metadata?.uid ? 'it is bound to another claim' : mismatch(pv, claim);
      if (pv !== undefined && why === undefined) return this.#bind(pv, claim);
      // kube-controller-manager's reason for a requested volume that does not fit is VolumeMismatch.
      return this.#report(claim, pv === undefined || pv.spec?.claimRef !== undefined ? 'FailedBinding' : 'VolumeMismatch', `Cannot bind to requested volume "${wanted}": ${why ?? 'unknown'}`);
    }
    const fits = available.filter((pv) => mismatch(pv, claim) === undefined);
    fits.sort((a, b) => (bytes(a.spec?.capacity?.['storage']) < bytes(b.spec?.capacity?.['storage']) ? -1 : 1));
    const best = fits[0];
    if (best !== undefined) return this.#bind(best, claim);
    const className = claim.spec?.storageClassName;
    const sc = className ? await this.#storage.readStorageClass({ name: className }).catch(() => undefined) : undefined;
    if (sc?.provisioner === LOCAL_PROVISIONER) return this.#provision(claim, sc.reclaimPolicy ?? 'Delete');
    const message = className ? `storageclass.storage.k8s.io "${className}" ${sc === undefined ? 'not found' : `is provisioned by ${sc.provisioner}, which does not run here`}` : 'no persistent volumes available for this claim and no storage class is set';
    await this.#report(claim, sc === undefined && className ? 'ProvisioningFailed' : 'FailedBinding', message);
  }

  async #provision(claim: V1PersistentVolumeClaim, reclaimPolicy: string): Promise<void> {
    const name = `pvc-${claim.metadata?.uid ?? ''}`;
    if ((await this.#core.readPersistentVolume({ name }).catch(() => undefined)) !== undefined) return;
    const size = claim.spec?.resources?.requests?.['storage'] ?? '0';
    const block = claim.spec?.volumeMode === 'Block';
    const made = await this.#provisioner.provision(name, bytes(size), block);
    const source = block ? { local: { path: made.path }, nodeAffinity: this.#everyNode() } : { hostPath: { path: made.path, type: 'Directory' } };
    try {
      await this.#core.createPersistentVolume({
        body: {
          metadata: { name, annotations: { 'pv.kubernetes.io/provisioned-by': LOCAL_PROVISIONER } },
          spec: {
            capacity: { storage: String(size) },
            accessModes: claim.spec?.accessModes ?? ['ReadWriteOnce'],
            volumeMode: block ? 'Block' : 'Filesystem',
            persistentVolumeReclaimPolicy: reclaimPolicy,
            ...(claim.spec?.storageClassName ? { storageClassName: claim.spec.storageClassName } : {}),
            claimRef: { kind: 'PersistentVolumeClaim', apiVersion: 'v1', namespace: claim.metadata?.namespace ?? '', name: claim.metadata?.name ?? '', uid: claim.metadata?.uid ?? '' },
            ...source,
          },
        },
      });
    } catch (err) {
      await this.#provisioner.release(made.path);
      throw err;
    }
    await this.#event(claim, 'Normal', 'ProvisioningSucceeded', `Successfully provisioned volume ${name}`);
    // The new PV arrives through the informer; binding the claim to it happens on that pass.
  }

  #everyNode(): { required: { nodeSelectorTerms: Array<{ matchExpressions: Array<{ key: string; operator: string; values: string[] }> }> } } {
    return { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [...this.#nodeNames] }] }] } };
  }

  async #bind(pv: V1PersistentVolume, claim: V1PersistentVolumeClaim): Promise<void> {
    const pvName = pv.metadata?.name ?? '';
    const claimRef = { kind: 'PersistentVolumeClaim', apiVersion: 'v1', namespace: claim.metadata?.namespace ?? '', name: claim.metadata?.name ?? '', uid: claim.metadata?.uid ?? '' };
    const boundPv = await this.#core.replacePersistentVolume({ name: pvName, body: { ...pv, spec: { ...pv.spec, claimRef } } });
    await this.#core.replacePersistentVolumeStatus({ name: pvName, body: { ...boundPv, status: { phase: 'Bound' } } });
    const namespace = claim.metadata?.namespace ?? '';
    const claimName = claim.metadata?.name ?? '';
    const updated = await this.#core.replaceNamespacedPersistentVolumeClaim({ namespace, name: claimName, body: { ...claim, spec: { ...claim.spec, volumeName: pvName } } });
    const status = { phase: 'Bound', accessModes: pv.spec?.accessModes ?? [], capacity: { ...pv.spec?.capacity } };
    await this.#core.replaceNamespacedPersistentVolumeClaimStatus({ namespace, name: claimName, body: { ...updated, status } });
    this.#reported.delete(key(claim));
    this.#log.info({ claim: key(claim), pv: pvName }, 'bound claim');
  }

  async #report(claim: V1PersistentVolumeClaim, reason: string, message: string): Promise<void> {
    if (this.#reported.get(key(claim)) === message) return;
    this.#reported.set(key(claim), message);
    await this.#event(claim, 'Warning', reason, message);
  }

  async #event(claim: V1PersistentVolumeClaim, type: 'Normal' | 'Warning', reason: string, message: string): Promise<void> {
    const regarding = { kind: 'PersistentVolumeClaim', apiVersion: 'v1', namespace: claim.metadata?.namespace ?? '', name: claim.metadata?.name ?? '', uid: claim.metadata?.uid ?? '' };
    await this.#events.record({ regarding, type, reason, message }).catch((err: unknown) => this.#log.debug({ err }, 'event failed'));
  }
}
